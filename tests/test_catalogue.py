"""The English catalogue is complete: every message has a translation (none empty, none
fuzzy), every ``{% translate "…" %}`` of a template is in it, and the compiled ``.mo`` says
what the ``.po`` says (``compilemessages`` was run)."""

import ast
import gettext
import re
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
PO = ROOT / "locale" / "en" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
TRANSLATE = re.compile(r"""\{%\s*(?:translate|trans)\s+(["'])(.+?)\1(?:\s+[^%]*)?%\}""")


def catalogue() -> list[tuple[str, list[str], bool]]:
    """(msgid, its translations, fuzzy) of every live entry of the .po file."""
    entries: list[tuple[str, list[str], bool]] = []
    for block in PO.read_text(encoding="utf-8").split("\n\n"):
        lines = [line for line in block.splitlines() if not line.startswith("#~")]
        fuzzy = any(line.startswith("#,") and "fuzzy" in line for line in lines)
        fields: dict[str, str] = {}
        key = ""
        for line in lines:
            found = re.match(r'(msgid|msgid_plural|msgstr(?:\[\d+\])?|msgctxt) (".*")$', line)
            if found:
                key = found[1]
                fields[key] = ast.literal_eval(found[2])
            elif line.startswith('"') and key:
                fields[key] += ast.literal_eval(line)
        if fields.get("msgid"):
            strs = [v for k, v in fields.items() if k.startswith("msgstr")]
            entries.append((fields["msgid"], strs, fuzzy))
    return entries


def test_every_message_is_translated_and_none_is_fuzzy() -> None:
    entries = catalogue()
    assert len(entries) > 300
    assert [msgid for msgid, strs, _ in entries if not all(strs)] == []
    assert [msgid for msgid, _, fuzzy in entries if fuzzy] == []


def test_every_translate_tag_of_a_template_is_in_the_catalogue() -> None:
    known = {msgid for msgid, _, _ in catalogue()}
    used = {
        (path.relative_to(ROOT).as_posix(), found[2])
        for path in (ROOT / "templates").rglob("*.html")
        for found in TRANSLATE.finditer(path.read_text(encoding="utf-8"))
    }
    assert len(used) > 100
    assert sorted((path, text) for path, text in used if text not in known) == []


def test_the_compiled_catalogue_matches_the_source() -> None:
    with MO.open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    for msgid, strs, _ in catalogue():
        if len(strs) == 1:
            assert compiled.gettext(msgid) == strs[0], msgid
