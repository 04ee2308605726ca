"""The agent: turn loop, prompt builder, tools and review (imports memory/, never gateway/)."""

__all__: list[str] = []
