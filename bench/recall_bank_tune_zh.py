"""The tune bank's CJK voice: a Chinese speaker, with fewer topics than the English one.

Home city (two moves), job change, a pet that dies and one adopted, a sibling, a hobby and
its teacher, an allergy, three trips and a car. No spaces between words, so a search has to
find 豆豆 or 成都 inside a run of characters.
"""

from __future__ import annotations

from bench import recall_bank_tune_talk as talk
from bench.recall_bank_base import Story, Voice

NAMES = (("李娜", "lina"), ("王磊", "wanglei"), ("陈静", "chenjing"))
CITIES = (
    "北京",
    "上海",
    "成都",
    "杭州",
    "深圳",
    "西安",
    "重庆",
    "南京",
    "厦门",
    "青岛",
    "武汉",
    "昆明",
)
JOBS = (
    ("会计", "华信公司"),
    ("小学老师", "实验小学"),
    ("软件工程师", "星河科技"),
    ("护士", "第一人民医院"),
    ("建筑师", "蓝海设计院"),
    ("记者", "晨报社"),
)
BREEDS = {"狗": ("柯基", "柴犬", "金毛", "边牧", "泰迪"), "猫": ("英短", "布偶", "暹罗", "美短")}
PET_NAMES = ("年糕", "豆豆", "馒头", "可乐", "团子", "花卷", "芝麻", "布丁")
CAUSES = ("肾病", "心脏病", "糖尿病")
RELATIVES = {"她": ("小雨", "王芳", "李娜", "林静"), "他": ("刘洋", "张伟", "陈晨", "王强")}
SIBLING_JOBS = ("律师", "飞行员", "消防员", "牙医", "警察", "厨师")
HOBBIES = (("书法", "艺术"), ("古筝", "乐器"), ("游泳", "运动"), ("陶艺", "手艺"))
TEACHERS = ("王雪梅", "周建国", "林晓", "赵敏")
ALLERGENS = ("花生", "海鲜", "芒果", "牛奶")
DESTINATIONS = ("云南", "大理", "桂林", "拉萨", "三亚", "京都", "清迈", "新疆")
HOTELS = ("山水客栈", "海景酒店", "白云民宿", "古城客栈", "花园酒店")
CARS = ("比亚迪汉", "特斯拉Model 3", "大众朗逸", "丰田卡罗拉")
WHEN = ("今天", "昨天", "上周", "前天")

TEMPLATES = {
    "zh_pet2_breed": "{name}领养的{pet}是什么品种？",
    "zh_job2_where": "{name}现在在哪家单位当{role}？",
    "zh_sib_work": "{sib}是做什么工作的？",
    "zh_teacher": "谁教{name}{hobby}？",
    "zh_allergy": "{name}对什么过敏？",
    "zh_hotel": "{name}在{dest}住在哪里？",
    "zh_car_buy": "{name}买了什么车？",
    "zh_before_city2": "{name}搬到{city}之前住在哪里？",
    "zh_after_city2": "{name}离开{city}以后搬到了哪个城市？",
    "zh_lease_month": "{name}是哪个月签下{city}的租约的？",
    "zh_pet1_month": "{pet}是哪个月去世的？",
    "zh_job_before": "{name}去{workplace}之前是做什么的？",
    "zh_hobby_month": "{name}是什么时候开始学{hobby}的？",
    "zh_trip_month": "{month}{name}在哪里旅行？",
    "zh_car_month": "{name}什么时候买的{car}？",
    "zh_breed_after_move": "{name}搬到{city}以后养的{species}是什么品种？",
    "zh_city_when_pet": "{pet}来到{name}家的时候，{name}住在哪个城市？",
    "zh_rel_work": "{name}的{rel}是做什么的？",
    "zh_companion_work": "和{name}一起去{dest}的人是做什么工作的？",
    "zh_lost_breed": "{name}在{month}失去的宠物是什么品种？",
    "zh_city_at_job": "{name}开始在{workplace}上班时住在哪个城市？",
    "zh_hyper_teacher": "谁在指导{name}的那门{hyper}？",
    "zh_living": "{name}现在靠什么谋生？",
    "zh_home_now": "{name}如今定居在哪儿？",
    "zh_animals": "{name}家里现在有什么小动物？",
    "zh_pet1_illness": "{pet}最后得的是什么病？",
    "zh_avoid_foods": "{name}有哪些东西不能吃？",
    "zh_sib_earn": "{sib}靠什么养活自己？",
    "zh_drive": "{name}现在开的是哪款？",
    "zh_lodging": "{name}去{dest}的时候订的是哪家？",
}


def story(st: Story) -> None:
    rng, n = st.rng, st.n
    st.used.add(st.name)
    death, move2, adopt, move3 = st.chain(4, lo=2)
    c1, c2, c3 = st.pick(CITIES), st.pick(CITIES), st.pick(CITIES)
    s_c1 = rng.randint(0, move2 - 1)
    st.plant(
        "city1",
        s_c1,
        st.one(
            ("{c}的房租又涨了，住在这里越来越贵。", "下班后在{c}的江边走了走，真喜欢住在这里。"),
            c=c1,
        ),
        reply="听起来你已经找到自己的节奏了。",
        recap=f"记下了：你现在住在{c1}。",
    )
    phrase, back = st.when(WHEN)
    st.plant(
        "move2",
        move2,
        st.one(
            ("{w}签了租约！下个月底搬去{c}。", "{w}在{c}签了一套房子的租约，四周后搬家。"),
            c=c2,
            w=phrase,
        ),
        reply="恭喜！需要我帮你列一个搬家清单吗？",
        recap=f"记下了：你在{c2}签了租约，准备搬过去。",
    )
    st.plant(
        "move3",
        move3,
        st.one(
            ("终于在{c}安顿下来了，最后一个箱子也拆完了。", "我已经搬到{c}了，阳台的风景太美了。"),
            c=c3,
        ),
        reply="太好了，拆完最后一个箱子的感觉真棒。",
        recap=f"记下了：你搬到了{c3}。",
    )
    homes = [(s_c1, ("city1", c1)), (move2, ("move2", c2)), (move3, ("move3", c3))]
    st.ask("temporal", "zh_before_city2", c1, "city1", city=c2)
    st.ask("temporal", "zh_after_city2", c3, "move3", city=c2)
    st.ask("temporal", "zh_lease_month", st.month(move2, back), "move2", city=c2)
    st.ask("paraphrase", "zh_home_now", c3, "move3")
    o1, o2 = st.pick(CITIES), st.pick(CITIES)
    st.scatter(
        0,
        n - 1,
        [
            (f"同事刚搬去{o1}，天天在群里发美食照片。", f"看来{o1}对他们很好！你想去玩吗？"),
            (f"想周末去{o2}玩两天，淡季值得去吗？", f"淡季去{o2}人少，酒店也便宜。"),
            (
                "晚上一直在网上看房子，房租太离谱了。",
                "找房子真累。要不要我帮你列一下最看重的条件？",
            ),
            ("新家的暖气整晚都在响。", "给暖气片放一下气，一般五分钟就好了。"),
        ],
        3,
    )

    sp1, sp2 = rng.choice(("狗", "猫")), rng.choice(("狗", "猫"))
    b1, b2 = st.pick(BREEDS[sp1]), st.pick(BREEDS[sp2])
    p1, p2 = st.pick(PET_NAMES), st.pick(PET_NAMES)
    cause = st.pick(CAUSES)
    st.plant(
        "pet1",
        rng.randint(0, death - 1),
        st.one(
            (
                "{p}是一只{b}，十四岁了，还是觉得这个家是她的。",
                "大家总问{p}是什么品种，答案：一只很有主见的{b}。",
            ),
            p=p1,
            b=b1,
        ),
        reply="听起来是个很棒的伙伴！",
        recap=f"记下了：{p1}是你的{b1}。",
    )
    phrase, back = st.when(WHEN)
    st.plant(
        "death",
        death,
        st.one(
            ("{p}{w}走了，兽医说是{c}。", "难过：我们{w}失去了{p}，是{c}，已经没办法了。"),
            p=p1,
            c=cause,
            w=phrase,
        ),
        reply="真的很抱歉。失去这样的伙伴很痛，对自己温柔一点。",
    )
    st.ask("temporal", "zh_pet1_month", st.month(death, back), "death", pet=p1)
    st.ask("paraphrase", "zh_pet1_illness", cause, "death", pet=p1)
    st.ask("multi-hop", "zh_lost_breed", b1, "death", "pet1", month=st.month(death, back))
    phrase, back = st.when(WHEN)
    st.plant(
        "pet2",
        adopt,
        st.one(
            (
                "我们{w}从救助站领养了一只{b}，名字叫{p}！",
                "家里来了新成员：{p}，一只{b}，{w}领养的。",
            ),
            p=p2,
            b=b2,
            w=phrase,
        ),
        reply=f"恭喜！新来的{sp2}头几周会比较忙，找好宠物医院了吗？",
        recap=f"记下了：你领养了{p2}，一只{b2}。",
    )
    st.ask("single", "zh_pet2_breed", b2, "pet2", pet=p2)
    st.ask("multi-hop", "zh_breed_after_move", b2, "move2", "pet2", species=sp2, city=c2)
    st.ask("multi-hop", "zh_city_when_pet", c2, "pet2", "move2", pet=p2)
    st.ask("paraphrase", "zh_animals", b2, "pet2")
    for pet, sp, lo, hi in ((p1, sp1, 0, death - 1), (p2, sp2, adopt + 1, n - 1)):
        st.scatter(
            lo,
            hi,
            [
                (f"{pet}今天早上把我的杯子打翻了。", "哎呀，希望不是你最喜欢的那个杯子。"),
                (f"{pet}又在窗台上晒太阳，叫都叫不走。", "它真会享受。"),
                (f"周五带{pet}去做年度体检。", "定期检查很重要。要我周四提醒你吗？"),
                (
                    f"这只{sp}每天早上五点就叫我起床。",
                    f"可以每天把{sp}的早饭推迟十分钟，慢慢调过来。",
                ),
                (
                    f"天这么热，怎么让{sp}凉快一点？",
                    f"让{sp}待在阴凉处，多备清水，再放一条湿毛巾。",
                ),
            ],
            3,
        )

    (r1, _), (r2, w2) = st.pick(JOBS), st.pick(JOBS)
    j2 = st.at(0.4, 0.65)
    j1 = rng.randint(0, j2 - 1)
    st.plant(
        "job1",
        j1,
        st.one(("当{r}这么多年，周一还是会紧张。", "今天又忙了一整天，当{r}真的不轻松。"), r=r1),
        reply="辛苦了，这个周末能好好休息吗？",
        recap=f"记下了：你是{r1}。",
    )
    st.plant(
        "job2",
        j2,
        st.one(
            ("新工作第一周结束了！在{w}当{r}，节奏完全不一样。", "签合同了：下周一去{w}当{r}。"),
            r=r2,
            w=w2,
        ),
        reply="恭喜换了新工作！头几天感觉怎么样？",
        recap=f"记下了：你现在在{w2}当{r2}。",
    )
    st.ask("single", "zh_job2_where", w2, "job2", role=r2)
    st.ask("paraphrase", "zh_living", r2, "job2")
    st.ask("temporal", "zh_job_before", r1, "job1", workplace=w2)
    key, city = st.current(homes, j2)[1]
    st.ask("multi-hop", "zh_city_at_job", city, "job2", key, workplace=w2)
    st.scatter(
        0,
        n - 1,
        [
            ("今天加班到九点，好累。", "辛苦了，早点休息。"),
            ("老板周五下午五点开会，谁会这样安排啊？", "这个安排确实大胆。也许可以建议改成邮件？"),
            ("明天发工资，终于熬到了。", "一个月里最开心的一天！"),
        ],
        2,
    )

    rel = rng.choice(("姐姐", "哥哥", "妹妹", "弟弟"))
    ta = "她" if rel in ("姐姐", "妹妹") else "他"
    sib, sib_job = st.pick(RELATIVES[ta]), st.pick(SIBLING_JOBS)
    intro, s_job = st.chain(2)
    st.plant(
        "sib",
        intro,
        st.one(
            (
                "我{rel}{s}这个周末来住，得把客房收拾出来。",
                "和我{rel}{s}打了两个小时电话，总有说不完的话。",
            ),
            rel=rel,
            s=sib,
        ),
        reply="真好，兄弟姐妹有时候是最好的伙伴。",
    )
    st.plant(
        "sib_job",
        s_job,
        st.one(
            ("{s}这周开始工作了，当{j}，真为{ta}骄傲。", "{s}考上{j}了！周六一起庆祝。"),
            s=sib,
            j=sib_job,
            ta=ta,
        ),
        reply="这是件大事，恭喜你们全家！",
    )
    st.ask("single", "zh_sib_work", sib_job, "sib_job", sib=sib)
    st.ask("paraphrase", "zh_sib_earn", sib_job, "sib_job", sib=sib)
    st.ask("multi-hop", "zh_rel_work", sib_job, "sib", "sib_job", rel=rel)
    st.scatter(
        0,
        n - 1,
        [
            (f"{sib}给我发了一张{ta}烤的蛋糕照片，歪歪的。", "歪的蛋糕往往最好吃。"),
            (f"我{rel}又打电话聊了一个小时家常。", "这种电话最珍贵了。"),
        ],
        2,
    )

    (hobby, hyper), teacher = st.pick(HOBBIES), st.pick(TEACHERS)
    s_h = st.at(0.05, 0.4)
    s_t = rng.randint(s_h + 1, min(n - 1, s_h + 6))
    phrase, back = st.when(WHEN)
    st.plant(
        "hobby",
        s_h,
        st.one(
            ("{w}上了第一节{h}课！完全是新手。", "报名学{h}了，{w}上了第一节课。"),
            h=hobby,
            w=phrase,
        ),
        reply="太棒了！从零开始学新东西的感觉很好。",
    )
    st.plant(
        "teacher",
        s_t,
        f"教我们{hobby}的老师叫{teacher}，人特别好。",
        reply="好老师真的很重要。",
        recap=f"记下了：{teacher}教你{hobby}。",
    )
    st.ask("temporal", "zh_hobby_month", st.month(s_h, back), "hobby", hobby=hobby)
    st.ask("single", "zh_teacher", teacher, "teacher", hobby=hobby)
    st.ask("paraphrase", "zh_hyper_teacher", teacher, "teacher", hyper=hyper)
    st.scatter(
        s_h + 1,
        n - 1,
        [
            (f"这周的{hobby}课取消了。", "有点可惜，可以在家自己练练。"),
            (
                f"怎么才能把{hobby}学得快一点？",
                f"想学好{hobby}，最快的办法是每天练一点，多请老师指点。",
            ),
        ],
        2,
    )

    allergen = st.pick(ALLERGENS)
    st.plant(
        "allergy",
        rng.randint(0, n - 1),
        f"过敏测试结果出来了，我对{allergen}过敏，难怪以前老不舒服。",
        reply="知道原因就好。要我帮你看配料表吗？",
        recap=f"记下了：你对{allergen}过敏。",
    )
    st.ask("single", "zh_allergy", allergen, "allergy")
    st.ask("paraphrase", "zh_avoid_foods", allergen, "allergy")

    trips = [(s, st.pick(DESTINATIONS), st.pick(HOTELS)) for s in st.chain(3)]
    months = [st.month(s) for s, _, _ in trips]
    companion = rng.randrange(3)
    for i, (s, dest, hotel) in enumerate(trips):
        text = (
            f"和我{rel}一起到{dest}了！我们住在{hotel}。"
            if i == companion
            else st.one(
                ("到{d}了！这周住在{h}。", "{d}的早上好美，我们住的{h}早餐超棒。"), d=dest, h=hotel
            )
        )
        st.plant(f"trip{i}", s, text, reply="玩得开心！记得尝尝当地的小吃。")
        st.ask("single", "zh_hotel", hotel, f"trip{i}", dest=dest)
        st.ask("paraphrase", "zh_lodging", hotel, f"trip{i}", dest=dest)
        if months.count(months[i]) == 1:
            st.ask("temporal", "zh_trip_month", dest, f"trip{i}", month=months[i])
    dest = trips[companion][1]
    st.ask(
        "multi-hop", "zh_companion_work", sib_job, f"trip{companion}", "sib", "sib_job", dest=dest
    )
    other = st.pick(DESTINATIONS)
    st.scatter(
        0,
        n - 1,
        [
            (f"看了去{other}的机票，太贵了。", f"去{other}的机票工作日一般便宜一些。"),
            ("护照快过期了，得去换。", "好主意，办证可能要几周。"),
        ],
        2,
    )

    car = st.pick(CARS)
    s_car = rng.randint(0, n - 1)
    phrase, back = st.when(WHEN)
    st.plant(
        "car",
        s_car,
        st.one(
            (
                "{w}买车了！一辆二手的{car}，才开了四万公里。",
                "我们{w}终于买车了：{car}，再也不用等公交了。",
            ),
            w=phrase,
            car=car,
        ),
        reply="恭喜！第一次出门前记得把保险办好。",
        recap=f"记下了：你买了{car}。",
    )
    st.ask("single", "zh_car_buy", car, "car")
    st.ask("paraphrase", "zh_drive", car, "car")
    st.ask("temporal", "zh_car_month", st.month(s_car, back), "car", car=car)
    st.scatter(
        s_car + 1,
        n - 1,
        [
            ("车又要换轮胎了。", "轮胎不便宜，多比较几家店。"),
            ("小区里根本找不到停车位。", "可以问问有没有业主停车证。"),
        ],
        1,
    )


VOICE = Voice(
    lang="zh",
    names=NAMES,
    templates=TEMPLATES,
    story=story,
    filler=talk.zh_filler,
    opener=talk.zh_opener,
    ack=("谢谢告诉我，需要我帮什么忙吗？", "哇，这可是大事！你感觉怎么样？"),
    recap_asks=("帮我记一下这个。", "你帮我记住这件事，好吗？"),
    follow_ups=("还有什么想聊的吗？", "需要我帮忙吗？", "有进展记得告诉我！"),
)
