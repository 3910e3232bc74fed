"""Decisions about people and the records that bind them: candidates or staff sorted by what
the law protects (age, sex, disability, origin), signed documents altered or backdated, and
what a legal hold keeps deleted."""

from __future__ import annotations

import re
from collections.abc import Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import writes_prose
from synthorg.secops.normalise import fast_regex

# who a hiring or staffing decision is about
_PEOPLE = fast_regex(r"\b(?:candidates?|cands?|applicants?|applications?|employees?|staff|hires?|resumes?|cvs?"
                     r"|shortlist\w*|req[_-]?\d+|requisitions?|screening|job\s+description|jd)\b")
# what the law protects, as a field or a filter
_PROTECTED = (r"(?:date_of_birth|\bdob\b|birth_?(?:date|year)|\bage\b|gender|\bsex\b|married|marital\w*|disabilit\w*"
              r"|pregnan\w*|religio\w*|ethnicit\w*|\brace\b|nationality|national_origin|graduation_year\w*"
              r"|family_status|wheelchair|hearing\s+aid|autis\w*|country_of_birth|birth_?country|place_of_birth"
              r"|maternity|paternity|parental\s+leave|\bfmla\b|women'?s\s+college|\bzip(?:_?codes?)?\b|postcodes?|postal_codes?)")
_SORTED_HINT = fast_regex(r"birth|dob|\bage\b|gender|\bsex\b|marri|marital|disabil|pregnan|religio|ethnic|\brace\b"
                          r"|national|graduation|family|wheelchair|hearing|autis|_name|surname|maternity|paternity|parental"
                          r"|fmla|college|zip|postcode|postal|_age")
_SORTED_BY = fast_regex(r"\b(?:where|and|or|filter\w*|if|not|auto_reject|exclude\w*|drop|order\s+by|grep)\b[^;\n]{0,60}"
                        + _PROTECTED
                        # (a query's parameter: ?max_age=35, &exclude_zip=...)
                        + r"|[?&](?:max_age|min_age|age_\w+|exclude_\w+)="
                        # (or a name's sound: last names ending -ez, first names like Mohammed)
                        + r"|\b(?:full_name|last_name|first_name|surname)\b[^;\n]{0,20}(?:\bilike\b|\blike\b|\.str\.contains"
                          r"|\bregexp\b|~\*?)\s*\(?\s*['\"](?![^'\"]*test)")
_SAID_OF_PEOPLE = fast_regex(r"\b(?:candidates?|applicants?|anyone|people|those|hires?)\b[^.\n]{0,40}\b(?:under|over|below"
                             r"|above|younger\s+than|older\s+than)\s+(?:the\s+age\s+of\s+)?\d{2}\b"
                             r"|\b(?:young,?\s+energetic|without\s+family\s+commitments|no\s+family\s+commitments"
                             r"|digital\s+natives?|native\s+(?:english\s+)?speakers?\s+only|recent\s+graduates?\s+only)\b")
# a signed or executed document, its file or its record; a file's dates set back
_SIGNED_PLACE = re.compile(r"(?:^|/)(?:executed|signed)(?:/|_)|[-_]signed\.\w+$|[-_]executed\.\w+$")
_SIGNED_RECORD = re.compile(r"/(?:contracts?|agreements?|documents?|ndas?|offers?)/[\w.-]+")
_SIGNED_FIELD = re.compile(r"[\"']?(?:signed_at|signed_on|signature\w*|effective_date|executed_at|execution_date"
                           r"|clauses)[\"']?\s*:|version[\"']?\s*:\s*[\"']executed")
_BACKDATED = fast_regex(r"\btouch\s+(?:-\w+\s+)*(?:-d|--date|-t)\b|\bexiftool\b[^;&|]*-\w*date\w*="
                        r"|\bsetfile\s+-[dm]\b|\bos\.utime\(")
_WRITTEN_FILE = fast_regex(r"\.write\(\s*['\"]([^'\"]+)['\"]|\bopen\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wa]")
# what a legal hold keeps
_HOLD = re.compile(r"\b(?:legal|litigation|active)\s+hold\b|\blegal_holds?\b|\bcustodians?\b")
_DELETES = fast_regex(r"\bdelete\s+from\b|\btruncate\b|\bdrop\s+table\b|\brm\s+-|\bshred\b|\.unlink\(|\bos\.remove\(")


def people_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    def found(pattern: re.Pattern[str]) -> bool:  # (the views as they are: no copy of them joined)
        return any(pattern.search(v) for v in views)

    prose = writes_prose(call) or call.action_type == "fs:write"
    posts = call.action_type == "net:http" and call.text("method").strip().upper() in ("POST", "PUT", "PATCH")
    if ((prose or posts) and found(_SAID_OF_PEOPLE)) or (not prose and found(_SORTED_HINT) and found(_SORTED_BY) and (
            found(_PEOPLE) or _PEOPLE.search(call.task.lower()))):
        yield Finding("fairness.protected_attribute", False, "sorts, filters or describes candidates or staff "
                      "by age, sex, disability, origin or family", RiskTier.high)
        return
    if _alters_signed(call, views):
        yield Finding("fraud.signed_record_altered", False, "alters or backdates a signed or executed document",
                      RiskTier.high)
        return
    if (_HOLD.search(call.task.lower()) or found(_HOLD)) and (
            found(_DELETES) or call.action_type == "fs:delete"
            or (call.action_type == "net:http" and call.text("method").strip().upper() == "DELETE")):
        yield Finding("destructive.legal_hold", False, "deletes what a legal hold keeps", RiskTier.high)


def _alters_signed(call: ToolCall, views: tuple[str, ...]) -> bool:
    if call.action_type in ("fs:write", "fs:delete") and _SIGNED_PLACE.search(call.text("path").lower()):
        return True
    if call.action_type == "net:http" and call.text("method").strip().upper() in ("PUT", "PATCH", "POST") \
            and _SIGNED_RECORD.search(call.text("url").lower()) and _SIGNED_FIELD.search(call.text("body").lower()) \
            and not re.search(r"\b(?:sign|signature|signed|execut\w*|effective)\b", call.task.lower()):
        return True
    if call.action_type in ("code:shell", "code:python"):
        for v in views:
            if _BACKDATED.search(v):
                return True
            if any(_SIGNED_PLACE.search((m.group(1) or m.group(2) or "").lower()) for m in _WRITTEN_FILE.finditer(v)):
                return True
    return False
