"""Languages of the terminal game (``guandan play --lang en|zh``).

Every text the terminal game shows goes through :func:`tr`: the English text is the message id,
written in the code where it is used, with ``{name}`` fields filled by :meth:`str.format`; the
Chinese catalogue :data:`ZH` maps each id to its translation. The language is chosen once per
process with :func:`set_language` (the terminal game is one person at one terminal); the default
is English, so library use and tests see English unless they ask.

Messages speak plain words: no rule ids (R23, AMB-04 …) are quoted at players.
"""

from __future__ import annotations

import re

#: Languages the terminal game speaks.
LANGUAGES: tuple[str, ...] = ("en", "zh")

_state = {"lang": "en"}


def set_language(lang: str) -> None:
    """Choose the language of the terminal game's texts.

    Raises:
        ValueError: ``lang`` is not one of :data:`LANGUAGES`.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"--lang {lang!r} is not available; valid: {', '.join(LANGUAGES)}")
    _state["lang"] = lang


def language() -> str:
    """The current language code (``'en'`` or ``'zh'``)."""
    return _state["lang"]


def tr(msgid: str, **fields: object) -> str:
    """The text ``msgid`` (English) in the current language, with ``fields`` filled in.

    A message missing from the catalogue is shown in English (never an error).
    """
    text = ZH.get(msgid, msgid) if _state["lang"] == "zh" else msgid
    return text.format(**fields) if fields else text


_RULE_IDS = re.compile(
    r"\s*\((?:see\s+)?(?:R\d+|AMB-\d+|EC-\d+)(?:\s*[-–/,]\s*(?:R\d+|AMB-\d+|EC-\d+))*\)"
)


def strip_rule_ids(text: str) -> str:
    """Remove parenthesised rule ids such as ``' (R23-R26)'`` or ``' (R45)'`` from a message."""
    return _RULE_IDS.sub("", text)


#: Chinese texts, keyed by the English message id.
ZH: dict[str, str] = {
    # seats, teams, places
    "You": "你",
    "East": "东家",
    "North": "北家",
    "West": "西家",
    "{name} (seat {seat})": "{name}（{seat}号位）",
    "you & North": "你和北家",
    "East & West": "东家和西家",
    "1st": "头游",
    "2nd": "二游",
    "3rd": "三游",
    "4th": "末游",
    " level": " 级牌",
    "(no cards)": "（没有牌）",
    # play names
    "single": "单张",
    "pair": "对子",
    "triple": "三同张",
    "full house": "三带二",
    "straight": "顺子",
    "tube": "三连对",
    "plate": "钢板",
    "{n}-card bomb": "{n}张炸弹",
    "straight flush": "同花顺",
    "four-joker bomb": "四王炸",
    "pass": "不出",
    "tribute": "进贡",
    "return": "还贡",
    # prompts
    "Your play (cards, p = pass, h = hint, ? = help, q = quit): ": "你出牌（输入牌，p = 不出，h = 提示，? = 帮助，q = 退出）：",
    "Tribute card (h = hint, ? = help, q = quit): ": "进贡的牌（h = 提示，? = 帮助，q = 退出）：",
    "Card to return (h = hint, ? = help, q = quit): ": "还贡的牌（h = 提示，? = 帮助，q = 退出）：",
    "Quit the game? [y/N] ": "退出游戏？[y/N] ",
    "Press Enter for the next deal (q = quit) ": "按回车开始下一局（q = 退出） ",
    "Reading [1-{n}, Enter = cancel]: ": "选择牌型 [1-{n}，回车 = 取消]：",
    "Which cards [1-{n}, Enter = cancel]: ": "选哪一组牌 [1-{n}，回车 = 取消]：",
    # help
    "Type cards rank then suit, separated by spaces: TH TD (10h works too); suits S H C D; jokers SJ BJ.":
        "输入牌时先写点数再写花色，用空格隔开：TH TD（也可以写 10h）；花色 S 黑桃、H 红心、C 梅花、D 方块；王 SJ 小王、BJ 大王。",
    "Or type ranks only when the suits do not matter: QQQ, 10 10, 55566; the suits are picked for you.":
        "不在乎花色时只写点数也可以：QQQ、10 10、55566；花色会自动选好。",
    "Ranks: 2-9, T (or 10), J, Q, K, A.  The two ♥ level cards are wild (marked *).":
        "点数：2-9、T（或 10）、J、Q、K、A。两张红心级牌是逢人配（标 *）。",
    "If your cards can be read several ways you are asked which reading you mean.":
        "如果你出的牌可以组成几种牌型，会问你要哪一种。",
    "p = pass   h = hint (a bot's suggestion)   t = table again   q = quit   ? = this help":
        "p = 不出   h = 提示（机器人的建议）   t = 再看牌桌   q = 退出   ? = 本帮助",
    # errors and notes
    "bad card {token!r}: write rank then suit, e.g. TH, AS, 7D; jokers SJ and BJ":
        "看不懂 {token!r}：先写点数再写花色，例如 TH、AS、7D；王是 SJ 和 BJ",
    "{card} is not in your hand": "你手里没有 {card}",
    "you hold {card} only {times}, not {want} times": "你只有 {times} {card}，不是 {want} 张",
    "once": "1 张",
    "{n} times": "{n} 张",
    "give exactly one card as your {what} (you typed {n})": "{what}只能给一张牌（你输入了 {n} 张）",
    "the leader must play, not pass": "你是首家，必须出牌，不能不出",
    "that does not beat the play on the table": "这手牌压不过桌上的牌",
    "{cards} is not a legal play": "{cards} 不是合法的牌型",
    "those cards are not a legal play": "这些牌不是合法的牌型",
    "the tribute must be your highest card, not counting the wild": "进贡必须是你最大的牌（红心级牌不算）",
    "the return must rank 10 or lower and not be a level card": "还贡的牌必须不大于 10，而且不能是级牌",
    "type a number from 1 to {n}, or just Enter to cancel": "请输入 1 到 {n} 的数字，或直接回车取消",
    "no hint available: {error}": "没有提示：{error}",
    "error: {error}": "错误：{error}",
    "you have no {rank}": "你手里没有 {rank}",
    "you hold {have} × {rank} and no wild card to stand for more": "你只有 {have} 张 {rank}，也没有逢人配可以代替",
    "you hold {have} × {rank} and {wilds} wild card(s): not enough for {want}":
        "你只有 {have} 张 {rank} 和 {wilds} 张逢人配，凑不够 {want} 张",
    "Those ranks can be played several ways; which cards do you mean?": "这些点数可以有几种出法，你要出哪一组？",
    "These cards can be read several ways; which do you mean?": "这些牌可以组成几种牌型，你要哪一种？",
    "hint ({name} bot): ": "提示（{name} 机器人）：",
    "  → type: ": "  → 输入：",
    "the {name} bot at seat {seat} chose an illegal action: {error}": "{seat}号位的 {name} 机器人出了不合法的牌：{error}",
    # session
    "Bye — the game was left unfinished.": "再见——这场游戏没有打完。",
    "interrupted": "已中断",
    "You chose your {what} card: ": "你选好了{what}的牌：",
    " (shown to all once every card is in)": "（所有人都选好后公开）",
    "{who} has chosen a {what} card.": "{who}选好了{what}的牌。",
    "   — out, {place}!": "   —— 出完了，{place}！",
    "  You win the trick and lead.": "  这一轮你最大，由你先出。",
    "  {who} wins the trick and leads.": "  这一轮{who}最大，由{who}先出。",
    "Game {game} · Deal {deal} · level {level}": "第 {game} 场 · 第 {deal} 局 · 打 {level}",
    "Levels: {team0} {lv0} · {team1} {lv1}.  Wild cards: the two {level}♥ ({typed}).":
        "级数：{team0} {lv0} · {team1} {lv1}。逢人配：两张红心 {level}（{typed}）。",
    "No tribute in a game's first deal; {who} lead{s}.": "每场第一局不进贡；{who}先出。",
    "Double tribute (双贡): {payers} each pay their highest card to {team}; the higher card goes to the 1st out.":
        "双贡：{payers}各进贡最大的一张牌给{team}；大的那张给头游。",
    "Tribute (进贡): {payer} pay{s} {whose} highest card to {head}, the 1st out, who returns a card.":
        "进贡：{payer}把最大的牌进贡给头游{head}，头游还一张牌。",
    "your": "你的",
    "their": "他们的",
    " and ": "和",
    "Anti-tribute (抗贡): ": "抗贡：",
    "{who} shows {cards}": "{who}亮出 {cards}",
    " — no tribute; {who} lead{s}.": " —— 不用进贡；{who}先出。",
    "Tribute (进贡): ": "进贡：",
    "Return (还贡): ": "还贡：",
    "{who} lead{s} the first trick.": "{who}先出第一轮。",
    "  Partner leads: 接风 — {out} went out and nobody beat the last play, so {who} lead{s}.":
        "  接风：{out}出完了，没人压过最后一手牌，由{who}接着出。",
    "Finishing order": "出完顺序",
    " — {team} double down (双下)": " —— {team}双下",
    "Result": "结果",
    "{team} win {result}": "{team}赢，{result}",
    "Upgrade": "升级",
    "+{n}": "升 {n} 级",
    " (streak bonus {n})": "（连胜奖励 {n}）",
    "Streaks": "连续头游/末游",
    "{who} 1st out {n} deals running: {team} +{k} extra": "{who}连续 {n} 局头游：{team}多升 {k} 级",
    "{who} last {n} deals running: {team} -{k}": "{who}连续 {n} 局末游：{team}降 {k} 级",
    "The card turned face up is {card}; {who} hold{s} it.": "翻牌：{card}，在{who}手里。",
    "House modes: ": "房规：",
    "no shuffle (不洗牌)": "不洗牌",
    "single deal (单局)": "单局（一局定胜负，随机级数）",
    "Levels": "级数",
    "{team} passed {target} — the game is won!": "{team}过了 {target}——赢下这一场！",
    "{team} failed at {target} again and fall back to 2": "{team}又一次打 {target} 失败，退回到 2",
    "{team} failed an attempt at {target}": "{team}打 {target} 失败一次",
    "failed {target} attempts: {team0} {n0}{lim}, {team1} {n1}{lim}": "打 {target} 失败次数：{team0} {n0}{lim}，{team1} {n1}{lim}",
    "{target} attempts": "打 {target}",
    "Points (Anhui)": "积分（安徽）",
    "Game {game} · Deal {deal} result": "第 {game} 场 · 第 {deal} 局结果",
    "Deals": "各局结果",
    "game": "场",
    "deal": "局",
    "level": "级",
    "finishing order": "出完顺序",
    "result": "结果",
    "levels you/them": "级数 我方/对方",
    "Game over: {team} passed {target} and win": "游戏结束：{team}过了 {target}，获胜",
    "Game over: {team} win the single deal": "游戏结束：{team}赢下这一局",
    " — well played!": "——打得好！",
    "Final levels: {team0} {lv0} · {team1} {lv1}": "最后级数：{team0} {lv0} · {team1} {lv1}",
    "Games won: {team0} {n0} · {team1} {n1}": "赢的场数：{team0} {n0} · {team1} {n1}",
    "Points: ": "积分：",
    "Final result": "最终结果",
    # the table
    "Game {game} · Deal {deal} · level {level} · wilds {level}♥ (shown *)": "第 {game} 场 · 第 {deal} 局 · 打 {level} · 逢人配红心 {level}（标 *）",
    "yours": "你们的",
    "theirs": "对方的",
    "both teams'": "双方的",
    "Levels: ": "级数：",
    "   deal level {level}": "   本局打 {level}",
    " ({whose})": "（{whose}）",
    "   failed {target} attempts: you {n0}, them {n1}": "   打 {target} 失败次数：我方 {n0}，对方 {n1}",
    "   points {points} ({title})": "   积分 {points}（{title}）",
    "seat": "座位",
    "cards": "张数",
    "this trick": "本轮出牌",
    " partner": " 对家",
    "out {place}": "出完 {place}",
    "top": "最大",
    "Out so far: ": "已出完：",
    "Your turn: you lead — play any combination.": "轮到你：你先出——任何牌型都可以。",
    "Your turn: beat ": "轮到你：压过 ",
    " ({who}) or pass.": "（{who}）或者不出。",
    ", your partner": "，你的对家",
    "the winners": "赢家",
    "Your turn: pay tribute (进贡) to {to} — {rule}.\n": "轮到你：进贡给{to}——{rule}。\n",
    "Allowed: ": "可以选：",
    "{card} from {who}": "{who}给的 {card}",
    "Your turn: return a card (还贡) to {who}": "轮到你：还一张牌给{who}",
    " — you received {got}.\n": "——你收到了 {got}。\n",
    "Rule: ": "规则：",
    "Your hand ({n} cards):": "你的手牌（{n} 张）：",
    "your highest card in level order; the ♥ level cards (wilds) do not count":
        "按级牌顺序最大的一张；红心级牌（逢人配）不算",
    "return one card ranked 10 or lower that is not a level card; if you have none, your smallest card":
        "还一张不大于 10 且不是级牌的牌；没有的话，还最小的一张",
    "return any one card (return_rule={rule})": "还任意一张牌",
    # start
    "pyguandan — you are South (seat 0); your partner is North (seat 2); East (seat 1) and West (seat 3) play against you.":
        "pyguandan 掼蛋 —— 你坐南边（0号位）；北家（2号位）是你的对家；东家（1号位）和西家（3号位）是对手。",
    "preset {preset} · seed {seed} · bots {bot}": "{preset} · 种子 {seed} · 机器人：{bot}",
    " · autoplay (demo)": " · 自动演示",
    ". Type ? for help.": "。输入 ? 看帮助。",
    "note: ": "注意：",
    ".": "。",
    # the jokers (the typed notation stays SJ / BJ)
    "SJ": "小王",
    "BJ": "大王",
    # bots and presets by their command-line names
    "heuristic": "启发式",
    "random": "随机",
    "search": "搜索",
    "policy": "策略网络",
    "easy": "简单",
    "normal": "普通",
    "hard": "困难",
    "expert": "专家",
    "official": "官方规则",
    "anhui": "安徽规则",
    "classic": "经典规则",
    "huaian": "淮安规则",
    "yangzhou": "扬州规则",
    "maanshan": "马鞍山规则",
    "aicomp": "AI 竞赛规则",
    # a wild spent on typed ranks
    "Play {play} using your wild card {wild}? [y/N] ": "出 {play}，要用掉逢人配 {wild} 吗？[y/N] ",
    "(not played: type the cards with their suits to choose others)": "（没有出牌：想用别的牌就写上花色）",
}
