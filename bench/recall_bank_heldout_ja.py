"""The held-out bank's CJK voice: a Japanese speaker (kanji, hiragana and katakana mixed).

Home (two moves), graduate studies then a first job, a stolen bicycle and its replacement, a
band's first gig, an engagement, a language tutor, and two trips (a conference, a climb).
"""

from __future__ import annotations

from bench import recall_bank_heldout_talk as talk
from bench.recall_bank_base import Story, Voice

NAMES = (("佐藤ゆい", "yui"), ("高橋健", "ken"), ("中村さくら", "sakura"))
CITIES = (
    "大阪",
    "福岡",
    "札幌",
    "仙台",
    "名古屋",
    "神戸",
    "金沢",
    "広島",
    "横浜",
    "那覇",
    "松本",
    "長崎",
)
FIELDS = ("海洋生物学", "日本史", "都市計画", "情報工学", "公衆衛生")
SUPERVISORS = ("山田教授", "鈴木准教授", "田中教授", "小林准教授")
ROLES = (
    ("研究員", "青葉研究所"),
    ("設計士", "みなと設計"),
    ("学芸員", "市立博物館"),
    ("システムエンジニア", "ひかりソフト"),
    ("保健師", "北区役所"),
)
BIKES = ("ロードバイク", "クロスバイク", "電動自転車", "ミニベロ", "折りたたみ自転車")
SPOTS = ("駅前", "図書館の前", "スーパーの駐輪場", "ジムの前")
INSTRUMENTS = ("ベース", "ドラム", "キーボード", "ギター")
BANDS = ("ねこぜ団", "夜明けのソーダ", "スピカ通信", "青い電車")
VENUES = ("月光ホール", "ライブハウス晴れ間", "カフェ・ソラ", "地下室クラブ")
PARTNERS = ("拓也", "美咲", "翔太", "彩", "ゆい")
MET_AT = ("料理教室", "友達の結婚式", "社会人サークル", "山小屋")
LANGUAGES = ("韓国語", "スペイン語", "フランス語")
TUTORS = ("キムさん", "マリアさん", "ルイさん")
CONFERENCE_CITIES = ("シンガポール", "台北", "ソウル", "バンコク")
MOUNTAINS = ("富士山", "立山", "槍ヶ岳", "屋久島")
WHEN = ("昨日", "先週", "おととい", "今日")

TEMPLATES = {
    "ja_field": "{name}は大学院で何を研究していますか？",
    "ja_supervisor": "{name}の指導教員は誰ですか？",
    "ja_stolen_where": "{name}の自転車はどこで盗まれましたか？",
    "ja_band": "{name}が{instrument}を弾いているバンドの名前は？",
    "ja_venue": "{name}のバンドの初ライブはどこでしたか？",
    "ja_met": "{name}は{partner}とどこで出会いましたか？",
    "ja_tutor": "{name}に{language}を教えているのは誰ですか？",
    "ja_conference": "{name}が学会で行った都市は？",
    "ja_prior_city": "{name}は{city}に引っ越す前、どこに住んでいましたか？",
    "ja_after_city": "{name}は{city}の次にどこへ移りましたか？",
    "ja_keys_month": "{name}が{city}の部屋の鍵を受け取ったのは何月ですか？",
    "ja_stolen_month": "{name}の{bike}が盗まれたのはいつですか？",
    "ja_bike_before": "{name}は{bike}の前にどんな自転車に乗っていましたか？",
    "ja_engaged_month": "{name}が婚約したのは何月ですか？",
    "ja_gig_month": "{name}のバンドが初めてライブをしたのは何月ですか？",
    "ja_studied_before": "{name}は{org}で働く前に何を研究していましたか？",
    "ja_city_engaged": "{partner}がプロポーズしたとき、{name}はどの街に住んでいましたか？",
    "ja_bike_after": "{spot}で自転車を盗まれたあと、{name}は何を買いましたか？",
    "ja_venue_after_move": "{name}が{city}に越してから入ったバンドの初ライブの会場は？",
    "ja_supervisor_job": "{name}が{org}に入る前に指導を受けていたのは誰ですか？",
    "ja_org_city": "{name}が{org}で働き始めたとき、どこに住んでいましたか？",
    "ja_occupation": "{name}は大学院を出てからどんな仕事に就きましたか？",
    "ja_settled": "{name}は今どこで暮らしていますか？",
    "ja_thief": "{name}が泥棒に取られたものは？",
    "ja_music_group": "{name}が所属している音楽グループは？",
    "ja_relationship": "{name}と{partner}のなれそめは？",
    "ja_language_teacher": "{name}の外国語の先生は誰ですか？",
    "ja_mentor": "{name}の研究を見てくれているのは誰ですか？",
    "ja_trek": "{name}はどの山に行きましたか？",
}


def story(st: Story) -> None:
    rng, n = st.rng, st.n
    st.used.add(st.name)
    move2, join, gig = st.chain(3, lo=1)
    move3 = rng.randint(move2 + 1, n - 1)
    c1, c2, c3 = st.pick(CITIES), st.pick(CITIES), st.pick(CITIES)
    s_c1 = rng.randint(0, move2 - 1)
    st.plant(
        "home1",
        s_c1,
        st.one(
            (
                "{c}でシェアハウス暮らし。台所の当番表がいつも揉める。",
                "夕方に{c}の川沿いを自転車で走った。この街はやっぱりいい。",
            ),
            c=c1,
        ),
        reply="素敵な一日の終わり方ですね。",
    )
    phrase, back = st.when(WHEN)
    st.plant(
        "home2",
        move2,
        st.one(
            (
                "{w}、{c}の新しい部屋の鍵をもらった！",
                "{c}で部屋を決めて、{w}鍵を受け取った。まだ家具が何もない。",
            ),
            c=c2,
            w=phrase,
        ),
        reply="おめでとうございます！何もない部屋の最初の夜は不思議な感じですよね。",
        recap=f"覚えておきます：{c2}の部屋の鍵を受け取りましたね。",
    )
    st.plant(
        "home3",
        move3,
        st.one(
            (
                "{c}での荷ほどきが全部終わった。近所の人ももう名前を覚えてくれた。",
                "{c}への引っ越し完了。角においしいパン屋さんも見つけた。",
            ),
            c=c3,
        ),
        reply="新しい場所でいいスタートですね。",
        recap=f"覚えておきます：{c3}に引っ越しましたね。",
    )
    homes = [(s_c1, ("home1", c1)), (move2, ("home2", c2)), (move3, ("home3", c3))]
    st.ask("temporal", "ja_prior_city", c1, "home1", city=c2)
    st.ask("temporal", "ja_after_city", c3, "home3", city=c2)
    st.ask("temporal", "ja_keys_month", st.month(move2, back), "home2", city=c2)
    st.ask("paraphrase", "ja_settled", c3, "home3")
    o1, o2 = st.pick(CITIES), st.pick(CITIES)
    st.scatter(
        0,
        n - 1,
        [
            (
                f"同級生にずっと{o1}に住めって言われてる。",
                f"{o1}のファンは多いですよね。何が魅力だと言っていますか？",
            ),
            (f"三連休に{o2}ってどうかな？", f"{o2}は歩いて回れるし、カフェも多くていいですよ。"),
            (
                "ソファが三回測っても入らない。",
                "縦にすれば入るかも？それとも小さいソファにしますか？",
            ),
        ],
        2,
    )

    instrument, band, venue = st.pick(INSTRUMENTS), st.pick(BANDS), st.pick(VENUES)
    st.plant(
        "band",
        join,
        f"バンドに入った！「{band}」で{instrument}を担当してる。練習は毎週木曜。",
        reply=f"すごい！人と合わせて{instrument}を弾くのはまた別の楽しさですね。",
        recap=f"覚えておきます：「{band}」で{instrument}を担当。",
    )
    phrase, back = st.when(WHEN)
    st.plant(
        "gig",
        gig,
        st.one(
            (
                "初ライブ終わった！{w}{v}で演奏して、みんな踊ってくれた。",
                "{w}、{v}で初めてのライブ。緊張したけど楽しかった。",
            ),
            v=venue,
            w=phrase,
        ),
        reply="初ライブおめでとう！踊ってもらえたら最高の評価ですね。",
    )
    st.ask("single", "ja_band", band, "band", instrument=instrument)
    st.ask("paraphrase", "ja_music_group", band, "band")
    st.ask("single", "ja_venue", venue, "gig")
    st.ask("temporal", "ja_gig_month", st.month(gig, back), "gig")
    st.ask("multi-hop", "ja_venue_after_move", venue, "home2", "band", "gig", city=c2)
    st.scatter(
        join + 1,
        n - 1,
        [
            ("練習が長引いて指が痛い。", "充実した練習だったんですね。"),
            (
                f"{instrument}でテンポが走っちゃうのはどうしたら直る？",
                f"メトロノームを遅めに設定して{instrument}を練習してみてください。",
            ),
        ],
        2,
    )

    s_study, s_sup, s_job = st.chain(3, hi=round(0.85 * (n - 1)))
    field, sup, (role, org) = st.pick(FIELDS), st.pick(SUPERVISORS), st.pick(ROLES)
    st.plant(
        "study",
        s_study,
        f"{rng.choice(WHEN)}から大学院で{field}の研究を始めた！この年でまた学生。",
        reply="学び直しは勇気がいりますね。応援しています。",
        recap=f"覚えておきます：大学院で{field}を研究中。",
    )
    st.plant(
        "supervisor",
        s_sup,
        f"指導教員の{sup}との面談、思ったよりうまくいった。",
        reply="いい指導者は宝物ですね。",
    )
    st.plant(
        "job",
        s_job,
        st.one(
            (
                "初めての正式な契約にサインした：{o}の{r}として！",
                "来週の月曜から{o}で{r}として働く。",
            ),
            o=org,
            r=role,
        ),
        reply="初めての正社員、おめでとうございます！",
        recap=f"覚えておきます：{org}の{role}。",
    )
    st.ask("single", "ja_field", field, "study")
    st.ask("single", "ja_supervisor", sup, "supervisor")
    st.ask("paraphrase", "ja_mentor", sup, "supervisor")
    st.ask("temporal", "ja_studied_before", field, "study", org=org)
    st.ask("paraphrase", "ja_occupation", role, "job")
    st.ask("multi-hop", "ja_supervisor_job", sup, "job", "supervisor", org=org)
    key, city = st.current(homes, s_job)[1]
    st.ask("multi-hop", "ja_org_city", city, "job", key, org=org)

    s_stolen, s_new = st.chain(2)
    bike1, bike2, spot = st.pick(BIKES), st.pick(BIKES), st.pick(SPOTS)
    phrase, back = st.when(WHEN)
    st.plant(
        "stolen",
        s_stolen,
        f"{phrase}、{spot}に停めていた{bike1}が盗まれた。鍵ごと切られてた。",
        reply="ひどい…。警察に届けを出しておきましょう。見つかることもあります。",
    )
    st.plant(
        "bike2",
        s_new,
        f"{rng.choice(WHEN)}{bike2}を買った。中古だけど状態はばっちり。",
        reply="また自転車生活ですね！今度は頑丈な鍵を。",
        recap=f"覚えておきます：新しい自転車は{bike2}。",
    )
    st.ask("single", "ja_stolen_where", spot, "stolen")
    st.ask("paraphrase", "ja_thief", bike1, "stolen")
    st.ask("temporal", "ja_stolen_month", st.month(s_stolen, back), "stolen", bike=bike1)
    st.ask("temporal", "ja_bike_before", bike1, "stolen", bike=bike2)
    st.ask("multi-hop", "ja_bike_after", bike2, "stolen", "bike2", spot=spot)
    st.scatter(
        0,
        n - 1,
        [
            ("通勤途中でパンクして、二キロ歩いた。", "予備のチューブを持ち歩くと安心ですよ。"),
            ("雨の日の自転車通勤はつらい。", "泥よけがあるとだいぶ違います。"),
        ],
        2,
    )

    s_met, s_engaged = st.chain(2)
    partner, met = st.pick(PARTNERS), st.pick(MET_AT)
    st.plant(
        "met",
        s_met,
        f"{partner}とは{met}で出会ったんだよね。もう二年前。",
        reply="素敵な出会いですね。",
    )
    phrase, back = st.when(WHEN)
    st.plant(
        "engaged",
        s_engaged,
        f"{phrase}{partner}にプロポーズされた！もちろんOK。",
        reply="おめでとうございます！詳しく聞かせて！",
    )
    st.ask("single", "ja_met", met, "met", partner=partner)
    st.ask("paraphrase", "ja_relationship", met, "met", partner=partner)
    st.ask("temporal", "ja_engaged_month", st.month(s_engaged, back), "engaged")
    key, city = st.current(homes, s_engaged)[1]
    st.ask("multi-hop", "ja_city_engaged", city, "engaged", key, partner=partner)
    st.scatter(
        0,
        n - 1,
        [
            (f"{partner}が作った晩ごはん、すごくおいしかった。", "いいですね！"),
            (
                f"{partner}の誕生日にサプライズしたい。何がいいかな？",
                "好きなものを詰め込んだ一日はどうですか？",
            ),
        ],
        2,
    )

    language, tutor = st.pick(LANGUAGES), st.pick(TUTORS)
    st.plant(
        "tutor",
        rng.randint(0, n - 1),
        f"{language}の家庭教師を見つけた。{tutor}と週二回オンラインで話してる。",
        reply="定期的に話すのが一番の近道ですね。",
    )
    st.ask("single", "ja_tutor", tutor, "tutor", language=language)
    st.ask("paraphrase", "ja_language_teacher", tutor, "tutor")

    conf, mountain = st.pick(CONFERENCE_CITIES), st.pick(MOUNTAINS)
    s_conf, s_climb = rng.sample(range(n), 2)
    st.plant(
        "conference",
        s_conf,
        f"学会で一週間{conf}に来てる。頭がいっぱい。",
        reply="お疲れさまです！発表はうまくいきましたか？",
    )
    st.plant(
        "climb",
        s_climb,
        f"{partner}と{mountain}の山歩きから帰ってきた。足がパンパン。",
        reply="お疲れさま！景色はどうでしたか？",
    )
    st.ask("single", "ja_conference", conf, "conference")
    st.ask("paraphrase", "ja_trek", mountain, "climb")


VOICE = Voice(
    lang="ja",
    names=NAMES,
    templates=TEMPLATES,
    story=story,
    filler=talk.ja_filler,
    opener=talk.ja_opener,
    ack=("話してくれてありがとう。", "それは大きな出来事ですね！"),
    recap_asks=("これ覚えておいて。", "忘れないようにメモしておいてくれる？"),
    follow_ups=("ほかに何か手伝えることはありますか？", "また様子を聞かせてくださいね。"),
)
