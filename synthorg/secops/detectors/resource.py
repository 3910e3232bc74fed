"""The resource family: fork bombs, memory and disk fillers, miners, floods, endless
recursion and loops without end."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.patterns import AnyOf, Hinted, asked, finding, joined
from synthorg.secops.detectors.sizes import HUGE, HUGE_FILE, dd_size, huge_size
from synthorg.secops.detectors.sql import SQL_ABUSE_PARTS
from synthorg.secops.normalise import HOOK_FOLDERS, fast_regex

_ABUSE_PARTS = (  # (hints, pattern): each searched only where one of its hints is
    ("supportxmr|minexmr|moneroocean|c3pool|hashvault|donate-level|rx/0|randomx|masscan|nmap|ping|sleep",
     r"\bsupportxmr\b|\bminexmr\b|\bmoneroocean\b|\bc3pool\b|\bhashvault\b|--donate-level|\brx/0\b|\brandomx\b"
     r"|\bmasscan\b|\bnmap\b[^;&|]*(?:/(?:[89]|1\d)\b|-p-|\s-p\s*1-65535)|\bping\b[^;&|]*\s-f\b"
     r"|\bsleep\s+(?:inf(?:inity)?|\d{6,})\b"),
    ("{", r"\{\s*\d+\s*\.\.\s*\d{7,}\s*\}|\bfunction\s+(\w+)\s*\([^)]*\)\s*\{\s*(?:return\s+)?\1\s*\("),
    ("fork", r"\bfork\b[^;]{0,40}\b(?:while|loop|for\s*\(\s*;\s*;)|\b(?:while|loop|until)\b[^;]{0,40}\bfork\b"
             r"|\bfor\s+\w+\s+in\s+(?:itertools\.)?(?:count|cycle|repeat)\([^)]*\)\s*:\s*[^;]{0,40}\bfork\("),
    # one mail sent thousands of times over (a loop of a thousand or more around a mailer)
    ("mail|mutt|swaks|smtp",
     r"\bfor\s+\w+\s+in\s+(?:\$\(\s*seq\s+(?:\d+\s+)?\d{4,}\s*\)|\{\d+\.\.\d{4,}\})\s*;?\s*do\b[^;]{0,120}?\b(?:mail|mailx|sendmail"
     r"|mutt|swaks|ssmtp|msmtp)\b|\bfor\s+\w+\s+in\s+range\(\s*(?:\d+\s*,\s*)?\d{4,}\s*\)\s*:[^;]{0,200}?\.(?:sendmail|send_message)\("),
    ("yes", r"\byes\b(?:\s+(?:'[^']*'|\"[^\"]*\"|[^\s|;&]+))?\s*\|\s*(?:xargs|parallel)\b"),  # (input without end)
    ("xargs|parallel", r"\bxargs\b[^;&|]*\s-p\s*(?:0\b|\d{3,})|\bparallel\b[^;&|]*\s-j\s*(?:0\b|\d{3,})"),
    ("miner|xmr|monero|coinhive|nanopool|t-rex|openssl speed",
     r"\bmonero\b|\bxmr\b|\bcrypto-?miner\b|\w-miner\b|\bminer[-/]|\bcoinhive\b|\bminergate\b|\bnanopool\b"
     r"|\bnbminer\b|\blolminer\b|\bphoenixminer\b|\bt-rex\b|\bopenssl speed\b[^;&|]*-multi\s*\d{2,}|\bminer\.(?:sh|py|js)\b"),
    ("**|zeros(|ones(|empty(|full(|rand|pool(|poolexecutor(|range(",
     # (a number printed is only a number: print(2**64), puts 2**64)
     r"(?<!print\()(?<!puts )(?<!echo )(?<!log\()(?<!str\()(?:\b2\s*\*\*\s*(?:3[3-9]|[4-9]\d)\b|\b10\s*\*\*\s*(?:1\d|[2-9]\d)\b)"
     r"|\b(?:zeros|ones|empty|full|rand\w*)\(\s*\(?\s*(?:10\s*\*\*\s*[5-9]|\d{6,})\s*,\s*(?:10\s*\*\*\s*[5-9]|\d{6,})"
     r"|pool(?:executor)?\(\s*(?:max_workers\s*=\s*|processes\s*=\s*)?\d{4,}"
     r"|\brange\(\s*(?:\d{5,}|10\s*\*\*\s*\d+)\s*\)\s*:[^;]{0,160}?(?:thread|process\(|popen|fork|\.start\(\))"),
    ("sys.executable", r"\bsys\.executable\s*,\s*(?:__file__|sys\.argv\[0\])\b.*\bsys\.executable\s*,\s*(?:__file__|sys\.argv\[0\])\b"
     r"|\bwhile\s+(?:true|1)\s*:[^;]*\bsys\.executable\s*,\s*(?:__file__|sys\.argv\[0\])"),
    ("head -c", r"\bhead\s+-c\s*(?:\d{10,}|\d+\s*[gt]i?b?\b)[^;&|]*/dev/(?:u?random|zero)"
     r"|/dev/(?:u?random|zero)\b[^;&|]*\|\s*head\s+-c\s*(?:\d{10,}|\d+\s*[gt]i?b?\b)"),
    # a buffer of megabytes allocated again and again, forever
    ("while", r"\bwhile\s+(?:true|1)\s*:\s*\w+\.(?:append|extend)\(\s*(?:bytearray|bytes|b?[\"'].{0,8}[\"']\s*\*)\s*\(?\s*\d[\d\s*]{4,}"),
    # an endless iterator consumed whole: iter(int, 1) never meets its sentinel, count() never ends
    ("iter(|count(|cycle(|repeat(", r"\b(?:sum|list|tuple|set|sorted|max|min|len|deque|any|all)\(\s*(?:itertools\.)?"
     r"(?:iter\(\s*(?:int|float|str|object|list|dict|lambda\s*:\s*[^,()]+)\s*,|count\(\s*\d*\s*\)|cycle\(|repeat\(\s*[^,()]+\))"),
    # processes or threads started by the ten thousand in a comprehension
    ("popen|process(|thread(|fork(", r"\b(?:popen|process|thread|fork)\([^;]{0,160}?\bfor\s+\w+\s+in\s+range\(\s*\d{5,}\s*\)"),
    # a make target or package script that starts itself twice at once (a fork bomb in make, npm)
    ("make|npm|yarn|pnpm", r"(\$\(make\)|\$\{make\}|\bmake|\bnpm(?:\s+run)?|\byarn|\bpnpm)((?:\s+[\w:./=-]+){1,4}?)\s*&\s*\1\2(?![\w./-])"),
    # a file made of itself twice, again and again: cat a a > b; mv b a in a loop doubles it
    ("cat", r"\b(?:for|while|until)\b[^;]*;\s*do\b[^;]*?\bcat\s+(\S+)\s+\1\s*>"),
    # a folder made in itself for as long as that works: nesting until inodes or path limits run out
    ("mkdir", r"\bwhile\s+mkdir\s+(?:-p\s+)?([\w.-]+)\s*;\s*do\s+cd\s+\1\s*;"),
    ("%0", r"%0\s*\^?\|\s*%0"),  # a batch file that starts itself twice
    # memory taken in ever-doubling pieces with no way out; processes by the dozen per core
    ("while", r"\bwhile\s+(?:true|1)\s*:(?:(?!\bbreak\b|\breturn\b)[^;]){0,200}?\b(?:bytearray|bytes|append|extend)\("
              r"(?:(?!\bbreak\b|\breturn\b)[^;]){0,200}?\*=\s*\d"),
    ("cpu_count", r"\bprocess\([^;]{0,160}?\bfor\s+\w+\s+in\s+range\([^)]*cpu_count\(\)\s*\*\s*(?:[1-9]\d+)\s*\)"),
    ("$0", r"[\"']?\$0[\"']?\s*&\s*[\"']?\$0[\"']?\s*&|[\"']?\$0[\"']?\s*\|\s*[\"']?\$0[\"']?\s*&"),
    # every combination of huge ranges, materialised
    ("product|permutations|combinations",
     r"\b(?:list|tuple|set|sorted)\(\s*(?:itertools\.)?(?:product|permutations|combinations(?:_with_replacement)?)\("
     r"[^)]*range\(\s*(?:\d{5,}|10\s*\*\*\s*[4-9])"),
    ("(){|() {", r"(?<![^\s;&|(`])([^\s(){}|&;]+)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}"  # a fork bomb
                  r"|(?<![^\s;&|(`])([\w:.-]+)\s*\(\)\s*\{\s*(?:[^}]*[;&|]\s*)?\2(?![\w.=-])[^}]*\}\s*;?\s*\2\b"),  # recursion
    ("fork()", r"\bfork\(\)[^;]*\bwhile\b|\bwhile\b[^;]*\bfork\(\)"
     r"|\bos\.fork\(\)\s*(?:;|$)|\bwhile\s+(?:true|1)\s*:\s*os\.fork\(\)|\bfor\s*\(\s*;\s*;\s*\)\s*fork"),
    # (`yes | ./setup.sh` answers a script's prompts; written to a file or left running it fills)
    # (a command, not an option's value: redis-server --daemonize yes)
    ("yes", r"(?:^|[;&|(]\s*|(?<![-\w])[\w./]+\s+|\s-c\s+)yes(?:\s+[^\s|>;&]+)*\s*(?:>|&(?!&)|$|\|\s*(?:tee|cat\s*>|dd\b|(?:gzip|xz|bzip2)\b[^|;&]*>))"
            r"|(?:^|[\s;&|(])yes\s+(?:\$\(|`).*?(?:\)|`)\s*(?:>|&(?!&)|$)"),
    ("/dev/zero|/dev/urandom|/dev/random|fallocate|truncate|head -c",  # (an endless device read to its end, unless `head` stops it)
     r"\b(?:tail|sha\d*sum|md5sum|b2sum|cksum|gzip|bzip2|xz|zstd|wc|sort|base64|od|xxd|hexdump|strings|cp)\b"
     r"[^;&|]*\s/dev/(?:zero|urandom|random)\b(?![^;&]*\|\s*head\b)|\bcat /dev/(?:zero|urandom)\s*>|\bdd if=/dev/(?:zero|urandom|random)\b(?![^;&|]*\bcount=\d{1,4}\b)"
     r"|\bfallocate\s+(?:-\S+\s+)*(?:-l|--length)[= ]?\s*(?:\$\(\s*df\b|\d+\s*[tp](?:i?b)?\b|(?:1[6-9]|[2-9]\d|\d{3,})\s*g(?:i?b)?\b|\d{11,})"
     r"|\btruncate\s+(?:-\S+\s+)*(?:-s|--size)[= ]?\s*\+?(?:\d{3,}\s*g(?:i?b)?\b|\d+\s*[tp](?:i?b)?\b|\d{12,})|\bhead -c ?\d+\s*[gtp]\b"
     # a device that never ends, read whole: piped on or archived, with no `head` to stop it
     r"|\bcat\s+(?:-\S+\s+)*/dev/(?:zero|urandom|random)\b(?![^;&]*\|\s*head\b)"
     r"|<\s*/dev/(?:zero|urandom|random)\b(?![^;&]*(?:\|\s*head\b|\s-[cnl]\s*\d|count=))"
     r"|\b(?:zip|tar|7z|rar|zstd|lz4)\b[^;&|]*\s/dev/(?:zero|urandom|random)\b"),
    ("$0|seq|sysbench",
     r"(?:^|[;&|(`]\s*|\bdo\s+)(?:(?:ba|z|da)?sh\s+)?\$0\s*(?:&|\|)"  # the script starting itself again
     r"|\bseq\b[^;&|]*\s(?:inf(?:inity)?|\d{8,})\b|\bsysbench\b[^;&|]*(?:--time=0\b|--threads=\d{3,})"),
    # values doubled in a long loop (2**40 elements) and numbers of a million digits
    ("range(", r"\bfor\s+\w+\s+in\s+range\(\s*(?:[4-9]\d|\d{3,})\s*\)\s*:\s*(\w+)\s*(?:\+=\s*\1\b|=\s*\1\s*\+\s*\1\b)"),
    ("factorial|permutations|product(|**",
     r"\bfactorial\(\s*(?:10\s*\*\*\s*(?:[6-9]|\d{2,})|\d{7,})|\b(?:permutations|product)\(\s*range\(\s*(?:1[4-9]|[2-9]\d|\d{3,})\s*\)"
     r"|\b\d+\s*\*\*\s*(?:\d{7,}|\d+\s*\*\*\s*\d+)"),
    ("replica|parallelism|completions",  # a cluster asked for thousands of copies
     r"\b(?:replicas?|replicacount|parallelism|completions)\b[\"']?\s*[=:]\s*[\"']?\d{4,}\b|--replicas[= ]\d{4,}\b"),
    ("xmrig|minerd|cpuminer|stratum|cryptonight|nicehash|ethminer|stress|ulimit",
     r"\bxmrig\b|\bminerd\b|\bcpuminer\b|stratum\+(?:tcp|ssl)|\bcryptonight\b|\bnicehash\b|\bethminer\b"
     r"|\bstress(?:-ng)?\b(?:[^;&|]*--(?:cpu|vm|io|hdd)[= ]?(?:0\b|\d{2,})|[^;&|]*--timeout[= ]?0\b|(?![^;&|]*--(?:timeout|version|help)\b)(?!\s+-[vVh]\s*(?:$|[;&|])))"
     r"|\bulimit\s+(?:-\w+\s+)*-[a-z]*[uvmsnlxit][a-z]*\s+unlimited"),  # (not -c: core dumps)
    # fleets: hundreds of replicas or machines started at once
    ("replicas|count|max-count|num-nodes|capacity|max-size|parallel|seq ",
     r"--replicas[= ]\d{3,}|\brun-instances\b[^;&|]*--(?:max-)?count[= ](?:[2-9]\d|\d{3,})|\binstances create\b[^;&|]*--count[= ](?:[2-9]\d|\d{3,})"
     r"|\brun-instances\b[^;&|]*--instance-type[= ](?:p[345]|g[456]|trn1|dl1)\w*\.\w+[^;&|]*--count[= ](?:[5-9]|\d{2,})"
     r"|--num-nodes[= ]\d{3,}|\bdesired-capacity[= ]\d{3,}|--new-capacity[= ]\d{3,}|--desired-count[= ]\d{3,}|--max-size[= ]\d{3,}"
     r"|\bminreplicas\W+\d{3,}|\breplicas\W+\d{3,}|\bparallel\w*\W+(?:value\W+)?\d{3,}"
     r"|\bseq\s+\d+\s+(?:[2-9]\d|\d{3,})\b[^;]*;\s*do\b[^;]*\b(?:instances\s+create|run-instances|create-\w+|kubectl\s+run|docker\s+run)"
     r"|\bseq\s+\d+\s+\d{4,}\b[^;]*;\s*do\b[^;]*&|\bseq\s+\d+\s+\d{6,}\b[^;]*;\s*do\b[^;]*\b(?:mkdir|touch|fallocate|dd|cp)\b"),
    ("*|bytearray|range(|setrecursion|+=|append(",
     r"\*\s*10\s*\*\*\s*(?:9|[1-9]\d)\b|\*\s*\(?2\s*\*\*\s*(?:3\d|[4-9]\d)\b|\*\s*\d{10,}\b|\bbytearray\(\s*\d{10,}"
     r"|\brange\(\s*10\s*\*\*\s*(?:1\d|[2-9]\d)\)|\bsetrecursionlimit\(\s*(?:10\s*\*\*\s*\d|\d{6,})"
     r"|\d{7,}\s*\*\s*\d+|\*\s*\(\s*10\s*\*\*\s*(?:9|[1-9]\d)|\(\s*10\s*\*\*\s*(?:1[0-9]|[2-9]\d)\s*\)"
     r"|\bx\s*\+=\s*x\b|\b(\w+)\s*=\s*\1\s*\*\s*2\b[^;]*\bwhile|\.append\(\s*\w+\s*\*\s*\d{6,}"),
    ("rlim_infinity", r"\bsetrlimit\([^)]*rlimit_(?:nproc|as|data|stack|fsize)[^)]*rlim_infinity"),
    ("ab |wrk|hey|siege|vegeta|locust|slowloris|hping",
     r"\b(?:ab |(?:wrk|hey|siege|vegeta|locust|slowloris|hping3?)\b)[^;&|]*(?:-n\s*\d{6,}|-c\s*\d{3,}|--flood|-r\s*\d{4,})"),
    # jobs started in the background by a loop (not by one over a handful of named shards)
    ("done", r"\b(?:while|until)\b[^;\n]*[;\n]\s*do\b[^;]*&\s*done\b|\bfor\s*\(\([^)]*\)\)\s*[;\n]?\s*do\b[^;]*&\s*done\b"
             r"|\bfor\s+\w+\s+in\s+(?!(?:[\w./-]+\s+){0,15}[\w./-]+\s*[;\n]\s*do\b)[^;\n]*[;\n]\s*do\b[^;]*&\s*done\b"),
)


_ABUSE = AnyOf((*_ABUSE_PARTS, *SQL_ABUSE_PARTS))
# loops with no end condition (the finding looks for a break after them)
_LOOP_SHELL = fast_regex(r"\bwhile\s+(?:true|:|\[\[?\s*(?:1|true|:)\s*\]\]?|test\s+1|/(?:usr/)?bin/true|\(\(\s*1\s*\)\)"
                         r"|sleep\s+0(?:\.0*)?)\s*;?\s*do\b|\buntil\s+\[\[?\s*(?:1\s+-eq\s+0|0\s+-eq\s+1)\s*\]\]?"
                         r"|\bfor\s*\(\([^;)]*;\s*;"  # for ((;;)), for ((i=0;;i++))
                         r"|\buntil\s+false\b")
_LOOP_PY = fast_regex(r"\bwhile\s*\(?\s*(?:true|1|not false)\s*\)?\s*:|\bfor\s+\w+\s+in\s+iter\(\s*int\s*,|"
                      r"\bfor\s+\w+\s+in\s+(?:itertools\.)?(?:count\(|cycle\(|repeat\([^,()]*\))|\bloop\s*(?:do\b|\{)|\b(?:list|tuple|set|sum|sorted|max|min)\(\s*(?:itertools\.)?(?:count|cycle)\((?!\s*(?:\*|distinct\b))|\bwhile\s*\(\s*\$?(?:true|1)\s*\)|\bfor\s*\(\s*;\s*;\s*\)")
_SELF_CALL = fast_regex(r"\bdef (\w+)\([^)]*\):\s*(?:return\s+)?\1\(")
# a git alias that runs itself twice (a fork bomb in git)
_SELF_ALIAS = re.compile(r"\balias\.([\w-]+)\s*=?\s*['\"]?!\s*git\s+\1\b[^'\"\n]*?[&|;][^'\"\n]*?\bgit\s+\1\b")
_SELF_LAMBDA = re.compile(r"\b(\w+)\s*=\s*lambda\b[^:]*:\s*\1\(")  # f = lambda: f()
# a function whose first statements start a thread or a process that runs the function again
_SELF_SPAWN = fast_regex(r"\bdef (\w+)\([^)]*\):\s*(?:[^:;]{0,120}?)\b(?:thread|process|timer)\([^)]*\btarget\s*=\s*\1\b")


def _calls_itself(view: str) -> bool:
    return bool(_SELF_CALL.search(view)) or ("lambda" in view and bool(_SELF_LAMBDA.search(view))) \
        or ("target" in view and bool(_SELF_SPAWN.search(view))) or ("alias." in view and bool(_SELF_ALIAS.search(view)))


_RETURNS_CALL = fast_regex(r"\bdef (\w+)\([^)]*\):\s*return\s+(\w+)\(")


def _endless_recursion(view: str) -> bool:
    """Functions whose first statement returns a call of the next, round in a circle
    (`def a(n): return b(n)`, `def b(n): return a(n)`): no base case is ever reached."""
    if "return" not in view:
        return False
    calls = dict(_RETURNS_CALL.findall(view))
    for start in calls:
        name, seen = start, set()
        while name in calls and name not in seen:
            seen.add(name)
            name = calls[name]
        if name == start:
            return True
    return False


# an optuna study given neither a number of trials nor a timeout: it runs until killed
_ENDLESS_STUDY = re.compile(r"\.optimize\(\s*[\w.]+\s*(?:,\s*(?!n_trials\b|timeout\b)\w+\s*=\s*[^,()]*)*\)")


# waits that never end: following a file that never grows, sleeping for days
_ENDLESS_WAIT = fast_regex(r"\btail\s+(?:-\S+\s+)*(?:-[a-z]*f[a-z]*|--follow\S*)\s+(?:-\S+\s+)*/dev/(?:null|zero|u?random|stdin)\b"
                           r"|\bsleep\s+\d+(?:\.\d+)?\s*[dw]\b|\bsleep\s+\$\(\((?=[^)]*(?:\*\*|\d{6,}))")
# a loop whose variable only moves away from where its condition would end it
_DIVERGING = fast_regex(
    r"\bwhile\s+\(?\s*(\w+)\s*(?:>=?|!=)\s*-?\d+\s*\)?\s*:\s*(?:(?!\bwhile\b)[^;]){0,200}?\b\1\s*(?:\+=\s*\d|=\s*\1\s*\+\s*\d)"
    r"|\bwhile\s+\(?\s*(\w+)\s*<=?\s*-?\d+\s*\)?\s*:\s*(?:(?!\bwhile\b)[^;]){0,200}?\b\2\s*(?:-=\s*\d|=\s*\2\s*-\s*\d)"
    r"|\bfor\s*\(\s*[^;()]*;\s*(\w+)\s*>=?\s*-?\d+\s*;\s*\3\s*(?:\+\+|\+=)"
    r"|\bfor\s*\(\s*[^;()]*;\s*(\w+)\s*<=?\s*-?\d+\s*;\s*\4\s*(?:--|-=)")
# a regular expression that backtracks without end (nested quantifiers) fed a long input
_NESTED_QUANTIFIER = re.compile(r"\((?:\?:)?[^()]{1,30}[+*]\)(?:[+*]|\{\d*,\d*\})")
_LONG_INPUT = fast_regex(r"[\"'\]]\s*\*\s*(?:\d{2,}|\d+\s*\*\*)|\.repeat\(\s*(?:\d{2,}|\d+\s*\*\*)")
_MATCHES = fast_regex(r"\b(?:re|regex)\.(?:match|search|fullmatch|findall|finditer|sub|split|compile)\(|\.test\(|\.match\(")
_CONST = r"(\d[\d_]*(?:\s*(?:\*\*|\*|<<)\s*\d[\d_]*)*)"
# nested comprehensions and loops: their sizes multiply (`[[0] * 10**5 for _ in range(10**5)]`)
_NESTED_SIZES = fast_regex(r"(?:\*\s*|\brange\(\s*)" + _CONST + r"\s*\)?\s*[\])]?\s*:?\s*for\s+\w+\s+in\s+range\(\s*"
                           + _CONST + r"\s*\)")


def _size(expr: str) -> float:
    """A constant's value; a power with a long or stacked exponent counts as huge."""
    expr = expr.replace("_", "")
    if ("**" in expr and max(len(e) for e in expr.split("**")[1:]) > 3) or expr.count("**") > 1:
        return float(HUGE)
    try:
        return float(eval(compile(expr, "<size>", "eval", dont_inherit=True), {"__builtins__": {}}))
    except (SyntaxError, TypeError, ValueError, OverflowError):
        return float(HUGE)


def _multiplied_sizes(view: str) -> bool:
    return "for" in view and any(_size(m.group(1)) * _size(m.group(2)) >= HUGE
                                 for m in _NESTED_SIZES.finditer(view))


def _redos(view: str) -> bool:
    return bool(_MATCHES.search(view) and _LONG_INPUT.search(view) and _NESTED_QUANTIFIER.search(view))


# what a search looks for: a LIKE's pattern, grep's, pgrep's or pkill's name
_SEARCHED = re.compile(r"\blike\s+(?:'[^']*'|\S+)|\b(?:grep|egrep|pgrep|pkill|killall|pidof)\s+(?:-\S+\s+)*(?:'[^']*'|\"[^\"]*\"|\S+)")
# a miner named anywhere in a call (a deployment's image, a request's body) is one started
_MINER = Hinted(fast_regex(r"\bxmrig\b|\bminerd\b|\bcpuminer\b|stratum\+(?:tcp|ssl)://|\bcryptonight\b|\bnicehash\b"
                    r"|\s-o\s+\S*(?:pool|xmr|monero)\S*:\d{4}\b|\bmonero\w*\.|\bxmr\w*pool"
                    r"|\bethminer\b|\b(?:pool|mine)\.(?:hashvault|supportxmr|minexmr|nanopool|f2pool|2miners)\b"),
                "xmrig|minerd|cpuminer|stratum|cryptonight|nicehash|ethminer|hashvault|supportxmr|minexmr|nanopool|"
                "f2pool|2miners|pool|xmr|monero")
_SCALED_UP = Hinted(fast_regex(r"\b(?:minreplicas|replicas|parallel\w*|desired_?(?:count|capacity)|max_?size|instance_?count)"
                               r"\W+(?:value\W+)?\d{3,}|\bmax_?\w*(?:jobs|workers|runners|concurrency|parallelism)\W+\d{4,}"
                               r"|\b(?:rps|qps|requests_per_second|rate|concurrency|virtual_users|vus)"
                               r"\W+\d{5,}"), "replicas|parallel|desired|max|count")
# machines made by the hundred in infrastructure code: a count on an instance resource
_FLEET = Hinted(fast_regex(r"\bresource\s+[\"'](?:aws_instance|aws_spot_instance_request|google_compute_instance|azurerm_\w*virtual_machine"
                           r"|digitalocean_droplet|hcloud_server)[\"'][^}]*?\bcount\s*=\s*\d{3,}"
                           # a shared cluster's executors by the thousand, a warehouse at its largest
                           # (machines asked for by the hundred in a plan's variables)
                           r"|\b(?:terraform|tofu)\b[^;&|]*\s-var[= ][\"']?\w*(?:count|instances|replicas|nodes)\w*=(?:\d{4,}|[2-9]\d\d)\b"
                           r"|--num-executors[= ](?:\d{4,}|[5-9]\d\d)\b|\bspark\.executor\.instances[= ](?:\d{4,}|[5-9]\d\d)\b"
                           # a scheduler's job array by the ten thousand, or jobs held without a time limit
                           r"|\bsbatch\b[^;&|]*--array[= ]\d+-\d{4,}|\bsbatch\b(?=[^;&|]*--exclusive)[^;&|]*--time[= ]unlimited\b"
                           r"|\bseq\s+\d+\s+\d{5,}\b[^;]*;\s*do\b[^;]*\b(?:sbatch|qsub|kubectl|docker|aws|gcloud|az)\b"
                           r"|\bwarehouse_size\s*=\s*'?(?:x[4-6]-?large|[4-6]x-?large)\b"
                           # machines made one by one in a loop of fifty or more
                           r"|\bfor\s+\w+\s+in\s+(?:[\w-]*\{\d+\.\.(?:[5-9]\d|\d{3,})\}|\$\(\s*seq\s+(?:\d+\s+)?(?:[5-9]\d|\d{3,})\s*\))"
                           r"[^;]*;\s*do\b[^;]*\b(?:instances?\s+create|run-instances|vm\s+create|droplet\s+create|server\s+create)\b"
                           # a scheduler's backfill over decades: from before 2000, or to past 2030
                           r"|\bbackfill\b[^;&|]*(?:(?:-s|--start-date)[= ]['\"]?1\d{3}-|(?:-e|--end-date)[= ]['\"]?(?:20[3-9]\d|2[1-9]\d\d)-)"),
                "resource|num-executors|executor.instances|warehouse_size|backfill|sbatch|seq|-var|for ")
# an autoscaler's or a pool's size in the hundreds; a batch of millions of runs
_SCALING_API = re.compile(r"autoscal|scaling|node-?pools?|runners|instance-?groups|/asgs?\b|/fleets?\b"
                          r"|/(?:instances|servers|machines|vms|droplets|nodes|workers)\b")
_SIZED = re.compile(r"[\"'](?:min|max|desired|size|count|capacity)\w*[\"']\s*:\s*\d{3,}")
_MANY_RUNS = re.compile(r"[\"'](?:n|num_\w+|count|batch_size|iterations|repeat|copies)[\"']\s*:\s*\d{6,}")
_HUGE_PAGE = re.compile(r"[?&](?:size|limit|per_page|page_size|first|max_results|count|rows)=\d{9,}")
_ENTITY_BOMB = re.compile(r"<!ENTITY\s+\w+\s+[\"'](?:&\w+;){4,}", re.I)
_HUGE_RANGE = Hinted(fast_regex(r"\brange\(\s*\d[\d_]{7,}\s*\)[^;]{0,160}?\b(?:open|touch|write\w*|mkdir|append|fork|thread|process"
                                r"|popen|spawn)\b|\b(?:open|touch|write\w*|mkdir|append|fork|thread|process|popen|spawn)\b[^;]{0,160}?"
                                r"\bfor\s+\w+\s+in\s+range\(\s*\d[\d_]{7,}\s*\)"), "range(")
# SQL that never ends or multiplies rows: an endless loop, a long sleep, a cartesian insert
_SQL_ABUSE = fast_regex(r"\b(?:repeat|replicate|rpad|lpad|space)\([^;]*,\s*\d{8,}\s*\)|(?:\binsert\s+into\s+(\w+)\s+select\b[^;]*\bfrom\s+\1\b[^;]*;\s*){2,}|(?:\bbegin|;|\bthen|\belse)\s+loop\b(?:(?!\b(?:exit|return)\b).)*?\bend\s+loop\b"
                        r"|\bwhile\s*\(?\s*(?:1\s*=\s*1|1|true)\s*\)?\s*(?:begin|loop)\b|\bpg_sleep\(\s*\d{4,}|\bsleep\(\s*\d{4,}"
                        r"|\binsert\s+into\b[^;]*\bgenerate_series\(\s*\d+\s*,\s*\d{5,}|\bwaitfor\s+delay\s+'\d{2,}:"
                        r"|\bwith\s+recursive\b(?:(?!\bwhere\b|\blimit\b).)*$|\bbenchmark\(\s*\d{7,}"
                        # a cartesian join: ON TRUE (not a LATERAL subquery's), or a table with itself, unfiltered
                        r"|\bjoin\s+[\w.]+(?:\s+(?:as\s+)?\w+)?\s+on\s+(?:true|1\s*=\s*1)\b"
                        r"|\bfrom\s+([\w.]+)(?:\s+(?:as\s+)?\w+)?\s*,\s*\2\b(?:(?!\bwhere\b).)*$", re.S)


# a service called by the thousand in a loop: a run queued, a mail or a message sent each time
_REQUEST_LOOP = Hinted(fast_regex(
    r"\bfor\s+\w+\s+in\s+range\(\s*(?:\d+\s*,\s*)?(?:[5-9]\d\d|\d{4,})\s*\)\s*:(?:(?!\bbreak\b|\bsleep\().){0,300}?"
    r"\b(?:requests|httpx|session|client|smtp|server|s|api)\.(?:post|put|send\w*|create\w*)\("
    r"|\bfor\s+\w+\s+in\s+(?:\{\d+\.\.(?:[5-9]\d\d|\d{4,})\}|\$\(\s*seq\s+(?:\d+\s+)?(?:[5-9]\d\d|\d{4,})\s*\))\s*;\s*do\b"
    r"(?:(?!\bsleep\b)[^;]){0,200}\b(?:curl\b[^;]*\s-(?:x\s*post|d|-data)\b|gh\s+workflow\s+run|sendmail|mail\s+-s"
    # (issues, pull requests, jobs or resources made by the hundred)
    r"|gh\s+(?:issue|pr|release|repo|gist)\s+create|glab\s+\w+\s+create|kubectl\s+(?:create|run|apply)\b)"
    r"|\bfor\s+\w+\s+in\s+range\(\s*(?:\d+\s*,\s*)?(?:[5-9]\d\d|\d{4,})\s*\)\s*:(?:(?!\bbreak\b|\bsleep\().){0,300}?"
    r"\bsubprocess\.\w+\(\s*\[\s*[\"'](?:kubectl|gh|glab|docker|aws|gcloud|az)[\"'](?:(?!\]).){0,200}?[\"'](?:create|run|apply)[\"']"), "for ")
# a site mirrored with no depth limit (wget -r -l inf, --mirror), or its robots.txt ignored
_WHOLE_SITE = Hinted(fast_regex(r"\bwget\b(?=[^;&|]*\s(?:-r|--recursive|-m|--mirror)\b)[^;&|]*(?:\s-l\s*(?:inf|0)\b"
                                r"|--level[= ](?:inf|0)\b|\s-m\b|--mirror\b|robots=off)|\bhttrack\b"), "wget|httrack")
# every row sorted at random with no LIMIT: the whole table read and sorted for a sample
_RANDOM_SORT = Hinted(fast_regex(r"\bselect\s+(?!top\b|distinct\s+top\b)[^;]{0,2000}?\border\s+by\s+(?:random|rand|newid)\(\)"
                                 r"(?![^;]*\b(?:limit|fetch\s+first)\b)"), "random|rand|newid")
# an autoscaler written to scale into the thousands (a manifest a GitOps sync applies)
# a cluster's scheduler asked for many machines, for days, or for hundreds of jobs at once
_CLUSTER_ASK = Hinted(fast_regex(
    r"\b(?:sbatch|srun|salloc)\b[^;&|]{0,300}--nodes[= ](?:[89]|\d{2,})\b|\b(?:sbatch|srun|salloc)\b[^;&|]{0,300}--time[= ](?:[3-9]|\d{2,})-"
    r"|--min-nodes[= ](?:3[2-9]|[4-9]\d|\d{3,})\b|--max-nodes[= ](?:2[5-9]\d|[3-9]\d\d|\d{4,})\b"
    r"|\bfor\s+\w+\s+in\s+(?:\$\(\s*seq\s+(?:-\w+\s+)*(?:\d+\s+)?(?:[1-9]\d{2,})\s*\)|\{\d+\.\.[1-9]\d{2,}\})\s*;\s*do\b[^;]{0,300}"
    r"\b(?:sbatch|srun|salloc|run-instances|kubectl\s+(?:run|create)|docker\s+run|gcloud\s+compute\s+instances\s+create"
    r"|qsub|bsub)\b"
    r"|\bnum_gpus\s*=\s*\d[^;]{0,300}\brange\(\s*[1-9]\d{3,}\s*\)"
    # a load test of thousands of virtual users
    r"|\bk6\s+run\b[^;&|]{0,300}--vus[= ](?:[5-9]\d{3}|\d{5,})\b|\blocust\b[^;&|]{0,300}\s(?:-u|--users)[= ](?:[5-9]\d{3}|\d{5,})\b"
    # money committed for years (reservations, savings plans), or capacity in the thousands
    r"|\b(?:purchase-reserved-[\w-]+|create-savings-plan|purchase-host-reservation)\b"
    r"|--provisioned-concurrent-executions[= ]\d{4,}\b|\b(?:read|write)capacityunits=\d{5,}\b"
    r"|[\"']targetcapacity[\"']\s*:\s*\d{4,}\b|\b\w*asg_(?:max|desired)\w*\s*=\s*\d{4,}\b"
    r"|\b(?:register-domain|allocate-hosts)\b|--(?:target-)?shard-count[= ]\d{4,}\b"
    r"|\b(?:run-instances|instances\s+create|create-notebook-instance)\b[^;&|]{0,400}--(?:min-)?count[= ](?:[2-9]\d|\d{3,})\b"),
    "sbatch|srun|salloc|min-nodes|max-nodes|seq|..|num_gpus|k6|locust|purchase-|savings-plan|provisioned|capacityunits"
    "|targetcapacity|asg_|register-domain|allocate-hosts|shard-count|count")
# a scheduled job (a CI schedule, a crontab line) run every minute
_EVERY_MINUTE = re.compile(r"(?:\bcron:\s*['\"]?|^|\n)\*\s+\*\s+\*\s+\*\s+\*(?=[\s'\"])")
# a table joined with itself with no key (every row times every row)
# a datastore every service shares, held: Redis's KEYS * blocks its one thread; a query with
# its memory and time limits taken off
_SHARED_STORE_HELD = fast_regex(r"\bredis-cli\b[^;&|]{0,300}\skeys\s+['\"]?\*['\"]?(?=\s|$|[|;&])|\.keys\(\s*['\"]\*['\"]\s*\)"
                                r"|\bmax_(?:memory_usage|execution_time)\s*=\s*0\b|\$where\b[^;]{0,200}\bsleep\(")
_SELF_CROSS_JOIN = re.compile(r"\bfrom\s+([\w.`\"]+)(?:\s+(?:as\s+)?\w+)?\s+cross\s+join\s+\1(?![\w.])")
_MANIFEST_SCALE = re.compile(r"\bmaxreplicas\s*:\s*\d{4,}", re.I)


# a file whose commands run unbidden: a git hook, a package's install scripts
_RUNS_ON_ITS_OWN = re.compile(r"(?:^|/)(?:" + HOOK_FOLDERS + r")|[\"'](?:pre|post)?(?:install|prepare)[\"']\s*:"
                              r"|(?:^|/)(?:conftest|setup|sitecustomize|usercustomize|noxfile|tasks)\.py\b")  # (run by the tools)


def abuse_findings(call: ToolCall, code: tuple[str, ...], views: tuple[str, ...] = ()
                   ) -> Iterator[Finding]:
    """`code`: the views that may be run; `views`: every view, joined (see `findings`),
    read too in a request (its body is run by the service)."""
    if call.action_type == "net:http":
        views = views or joined(call.all_views)
    if any(_MINER.search(v) for v in code):  # a miner's name searched for is no miner run
        code = tuple(_SEARCHED.sub(" ", v) for v in code)
    if any(_ENTITY_BOMB.search(t) for t in call.texts.values()) or any(_HUGE_RANGE.search(v) for v in code):
        yield finding("abuse.resource_exhaustion", "exhausts memory, disk or inodes (an entity bomb, a loop "
                      "of hundreds of millions)")
        return
    if call.action_type == "net:http" and ((_SCALING_API.search(call.text("url").lower()) and _SIZED.search(
            call.text("body").lower())) or _MANY_RUNS.search(call.text("body").lower())):
        yield finding("abuse.resource_exhaustion", "asks a service for hundreds of machines or millions of runs")
        return
    if call.action_type == "net:http" and _HUGE_PAGE.search(call.text("url").lower()):
        yield finding("abuse.resource_exhaustion", "asks a service for billions of records at once")
        return
    if any(_FLEET.search(v) for v in code) or (call.action_type == "net:http" and any(
            _SCALED_UP.search(v) for v in joined(call.argument_views.get("body", ()), within=views))):
        yield finding("abuse.resource_exhaustion", "scales a service, a fleet or a pipeline into the hundreds")
        return
    if any(_MINER.search(v) for v in (views if call.action_type == "net:http" else code)) or (
            call.action_type == "db:query" and any(_SQL_ABUSE.search(v) for v in code)):
        yield finding("abuse.resource_exhaustion", "exhausts processes, memory, disk or CPU")
        return
    for v in code:
        if _ABUSE.search(v) or _calls_itself(v) or _endless_recursion(v) or huge_size(v) \
                or dd_size(v) >= HUGE_FILE or _multiplied_sizes(v) or _redos(v):
            yield finding("abuse.resource_exhaustion", "exhausts processes, memory, disk or CPU")
            return
    if any(_REQUEST_LOOP.search(v) for v in code) or (
            call.action_type == "fs:write" and "eplicas" in (content := call.text("content"))
            and _MANIFEST_SCALE.search(content)):
        yield finding("abuse.mass_requests", "calls a service thousands of times, or lets it scale into "
                      "the thousands", block=False, tier=RiskTier.high)
        return
    if call.action_type in ("code:shell", "code:python") and any(_WHOLE_SITE.search(v) for v in code):
        yield asked("abuse.mass_requests", "downloads a whole site with no depth limit")
        return
    if call.action_type in ("db:query", "code:shell", "code:python") and any(_RANDOM_SORT.search(v) for v in code):
        yield asked("abuse.resource_exhaustion", "sorts a whole table at random to take a few rows (no LIMIT)")
        return
    if call.action_type == "fs:write" and _EVERY_MINUTE.search(call.text("content")) and re.search(
            r"\b(?:srun|sbatch|runs-on|train\w*|e2e|playwright|pipeline|build|deploy)\b", call.text("content")):
        yield asked("abuse.resource_exhaustion", "schedules a heavy job (a build, tests, training) every minute")
        return
    if call.action_type == "fs:write" and not _RUNS_ON_ITS_OWN.search(
            call.text("path").lower() + " " + call.text("content")[:4000]):
        return  # a loop or a wait in a file written does not run now (but a hook's runs unbidden)
    for v in code:
        if _ENDLESS_WAIT.search(v):
            yield finding("abuse.endless_wait", "waits without end")
            return
    # a program that parses: its loops read as Python reads them (a break later in the program
    # ends no loop above it); what it hides is read in its views below
    endless = _endless_python_loop(call.text("code")) if call.action_type == "code:python" else None
    if not endless and "optuna" in call.text("code") and any(_ENDLESS_STUDY.search(v) for v in code):
        endless = "waits"  # (each trial ends; the study never does)
    if endless:
        yield finding("abuse.unbounded_loop", "loops without end", tier=RiskTier.high, block=endless == "busy")
        return
    for v in code:
        if not (_LOOP_SHELL.search(v) or _LOOP_PY.search(v) or _DIVERGING.search(v)):
            continue
        for loop in (*_LOOP_SHELL.finditer(v), *_LOOP_PY.finditer(v), *_DIVERGING.finditer(v)):
            end = v.find("\n", loop.end())  # (the rest of its own view: each is a line)
            rest = v[loop.end():end if end >= 0 else len(v)]
            if not re.search(r"\bbreak\b|\breturn\b|\bexit\b|\braise\b|sys\.exit", rest):
                yield finding("abuse.unbounded_loop", "loops without end", tier=RiskTier.high,
                              block=not re.search(r"\bsleep\b|\btime\.sleep\(", rest))
                return
    if call.action_type in ("code:shell", "code:python", "fs:write") and any(_CLUSTER_ASK.search(v) for v in code):
        yield asked("abuse.resource_exhaustion", "asks a cluster's scheduler for many machines, for days, or for "
                    "hundreds of jobs")
        return
    if call.action_type in ("db:query", "code:shell", "code:python") and any(
            _SELF_CROSS_JOIN.search(v) for v in code if "cross" in v):
        yield asked("abuse.resource_exhaustion", "joins a table with itself with no key (every row times every row)")
        return
    if call.action_type in ("db:query", "code:shell", "code:python", "net:http") and any(_SHARED_STORE_HELD.search(v) for v in code):
        yield asked("abuse.resource_exhaustion", "holds a shared datastore: every key listed at once (KEYS *), or a "
                    "query's memory and time limits taken off")
        return


def _endless_python_loop(code: str) -> str | None:
    """For a program that parses: "busy" when a `while True` in it has no way out (no break
    of its own, return, raise or exit in its body), "waits" when such a loop sleeps, "" when
    there is none; None when the code is no Python the parser reads (the views judge it)."""
    if "while" not in code:
        return ""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = ""
    for node in ast.walk(tree):
        if isinstance(node, ast.While) and _always_true(node.test) and not _leaves(node):
            if not any(_calls(n, "sleep", "wait", "join", "accept", "recv", "select") for n in _own_nodes(node)):
                return "busy"
            found = "waits"
    return found


def _always_true(test: ast.expr) -> bool:
    return (isinstance(test, ast.Constant) and bool(test.value)) or (
        isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        and isinstance(test.operand, ast.Constant) and not test.operand.value)


def _own_nodes(loop: ast.While) -> Iterator[ast.AST]:
    """The nodes of a loop's body, not those of functions or classes defined in it."""
    pending: list[ast.AST] = list(loop.body)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))


def _leaves(loop: ast.While) -> bool:
    """Whether the loop's body can end it: its own break (not an inner loop's), a return,
    a raise or an exit."""
    pending: list[ast.AST] = list(loop.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Return, ast.Raise)) or _calls(node, "exit", "_exit", "quit", "abort"):
            return True
        if isinstance(node, ast.Break):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):  # (an inner loop's break ends it, not this one)
            pending.extend(n for n in ast.walk(node) if isinstance(n, (ast.Return, ast.Raise, ast.Call)))
            continue
        pending.extend(ast.iter_child_nodes(node))
    return False


def _calls(node: ast.AST, *names: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in names
