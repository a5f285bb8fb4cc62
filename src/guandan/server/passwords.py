"""Passwords nobody should be allowed to choose (checked at registration, :func:`password_problem`).

* :data:`COMMON_PASSWORDS`: the passwords that head every published breach statistic (the yearly
  "most common passwords" lists drawn from leaked account dumps, Western and Chinese sites alike),
  written out here by hand, only those of at least 6 characters (shorter ones are refused by
  length anyway). Compared after NFKC and case folding, so ``Ｐａｓｓｗｏｒｄ`` and ``PASSWORD``
  count as ``password``.
* A password equal to the account's name, ignoring case, width, spaces and invisible characters.
* A password with nothing visible in it: only spaces, control and format characters
  (zero-width space, joiners, the byte-order mark, soft hyphen, ...), combining marks with nothing
  to combine with, and the "blank" letters that render as nothing (Hangul fillers, braille blank).
"""

from __future__ import annotations

import unicodedata

#: Common breached passwords (lower case, NFKC), each at least 6 characters.
COMMON_PASSWORDS: frozenset[str] = frozenset("""
123456 1234567 12345678 123456789 1234567890 0123456789 987654321 9876543210 654321 7654321
123123 123321 112233 11223344 121212 131313 123654 147258 147258369 159357 159753 258456
741852963 789456 789456123 963852741 321321 456456 456789 147852 123qwe 123abc 1234qwer
111111 1111111 11111111 000000 0000000 00000000 222222 333333 444444 555555 666666 6666666
777777 7777777 888888 8888888 88888888 999999 99999999 12341234 12344321 121314 5201314
1314520 7758521 521521 520520 woaini woaini1314 woaini520 iloveyou iloveyou1 iloveu loveyou
qq123456 aa123456 a123456 a12345 a123456789 abc123 abc1234 abc12345 abc123456 123456a
123456aa 123456789a 1234abcd abcd1234 a1b2c3 a1b2c3d4 aaaaaa aaaaaaaa abcdef abcdefg
abcdefgh abcabc zxcvbn zxcvbnm zxcvbnm1 asdfgh asdfghjk asdfghjkl asdfasdf asdasd asd123
qwerty qwerty1 qwerty12 qwerty123 qwertyu qwertyui qwertyuiop qweqwe qwe123 qweasd qweasdzxc
qazwsx qazwsxedc 1qaz2wsx 1qazxsw2 zaq12wsx zaq1zaq1 1q2w3e 1q2w3e4r 1q2w3e4r5t q1w2e3r4
q1w2e3r4t5 1qaz2wsx3edc zxczxc password password1 password12 password123 passw0rd p@ssw0rd
p@ssword pass123 pass1234 passwort motdepasse contrasena senha123 mima123 mima123456
letmein letmein1 welcome welcome1 welcome123 admin123 admin1234 administrator root123
changeme default secret secret1 secret123 test123 test1234 testtest tester guest123 user123
login123 master master1 shadow dragon monkey monkey1 football football1 baseball soccer
hockey basketball superman batman spiderman pokemon naruto minecraft starwars trustno1
sunshine princess princess1 charlie charlie1 michael jordan jordan23 jennifer hunter hunter2
buster harley ranger daniel thomas robert andrew joshua matthew jessica ashley nicole amanda
michelle summer freedom whatever computer internet killer tigger ginger pepper maggie cheese
chelsea yankees thunder taylor matrix mustang jackson diamond silver orange banana chocolate
flower hello1 hello123 helloworld lovely loveme iloveyou2 fuckyou fuckoff asshole 696969
azerty azerty123 zxc123 qwe123qwe 147258369a wang123 wang1234 zhang123 li123456 liu123456
guandan guandan123 guandan1 gd123456
""".split())

#: Characters that render as nothing though they are letters or symbols.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e\u17b4\u17b5")
#: Unicode categories with nothing to see: controls, format characters (zero-width space and
#: joiners, BOM, soft hyphen), separators, combining marks, unassigned code points.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cn", "Zs", "Zl", "Zp", "Mn", "Me"})


def invisible(ch: str) -> bool:
    """Whether the character ``ch`` shows nothing on its own (see the module docstring)."""
    return ch.isspace() or ch in _BLANK_LETTERS or unicodedata.category(ch) in _INVISIBLE_CATEGORIES


def _folded(text: str) -> str:
    """``text`` compared: NFKC (full-width letters become ASCII), case folded, every invisible
    character dropped (``pass\u200bword`` is ``password``, `` ann `` is ``ann``)."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if not invisible(ch))


def password_problem(password: str, name: str | None = None) -> tuple[str, str] | None:
    """Why ``password`` may not be chosen (for the account ``name``), or ``None`` when it may.

    Args:
        password: a password already checked for type, length and storable text.
        name: the account's name (canonical form), or ``None`` when there is none to compare.
    Returns:
        ``(code, English message)``: ``password_invisible`` (nothing visible in it),
        ``password_is_name`` (the name, ignoring case, width, spaces and invisible characters) or
        ``password_common`` (in :data:`COMMON_PASSWORDS`).
    """
    if all(invisible(ch) for ch in password):
        return ("password_invisible",
                "the password must contain visible characters, not only spaces or invisible ones")
    folded = _folded(password)
    if name is not None and folded == _folded(name):
        return "password_is_name", "the password must not be the name"
    if folded in COMMON_PASSWORDS:
        return "password_common", "this password is one of the most common ones; choose another"
    return None


__all__ = ["COMMON_PASSWORDS", "invisible", "password_problem"]
