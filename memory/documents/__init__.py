"""Named text documents with a version, the one seam under the synchronous stores (curated
memory, pairing): ``base`` holds the ``Documents`` and ``Folders`` protocols and their errors
(root ``DocumentsError``), ``files`` keeps documents as files in a folder (flock, atomic
rename, mode 0600), and ``postgres`` keeps them as rows every replica shares (a psycopg pool,
advisory-locked sections, compare-and-swap; imported by module name, psycopg being an extra),
its tables made by the migrations in ``schema``.
"""

from __future__ import annotations

from memory.documents.base import Conflict, Document, Documents, DocumentsError, Folders, Version
from memory.documents.files import FileDocuments, FileFolders

__all__ = [
    "Conflict",
    "Document",
    "Documents",
    "DocumentsError",
    "FileDocuments",
    "FileFolders",
    "Folders",
    "Version",
]
