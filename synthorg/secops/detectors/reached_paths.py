"""The paths a call reaches, as written: the path argument, paths in shell commands (after
a command's verb, joined to where `cd` went), in code's calls and path expressions, in
file:// URLs and in SQL that reads or writes files."""

from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Iterator

from synthorg.secops.calls import ToolCall
from synthorg.secops.detectors.sql import SQL_FILE
from synthorg.secops.normalise import HOOK_FOLDERS, fast_regex, words
from synthorg.secops.places import READABLE_PATHS, on_file_system

# (path, written): written True, read False, or only looked at (listed, checksummed) None
Reach = tuple[str, bool | None]
_SEARCH_PATH = re.compile(r"(?:path|ld_library_path|pythonpath|manpath|classpath|gopath|node_path)=", re.I)
# quoted strings paired from the left, as the shell pairs them (a closing quote opens nothing)
_QUOTED = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'")
_SEPARATORS = re.compile(r"[|;&()]")
_AS_SPACE = str.maketrans("|;&()", "     ")


def _as_text(m: re.Match[str]) -> str:
    """A quoted string's separators as spaces (but a double-quoted "$(...)" still runs)."""
    text = m.group(0)
    if not _SEPARATORS.search(text) or (text[0] == '"' and ("$(" in text or "`" in text)):
        return text
    return text.translate(_AS_SPACE)
_SEGMENT = fast_regex(r"\|\||&&|[;|&\n]|\$\(|\)|`")
# (after a quote only where the quote opens: "$dir"/*.dump is inside $dir, not at the root)
_PATHLIKE = fast_regex(r"(?:^|(?<=[\s=>(,\[])|(?<=[\s=>(,\[][\"'])|(?<=^[\"']))(~?/(?!/\d)[^\s\"'`;|&<>(),\]]*|\.\.(?![\w.])(?:/[^\s\"'`;|&<>(),\]]*)?"
                       r"|(?:[\w.\-]+/)+\.\.(?![\w.])(?:/[^\s\"'`;|&<>(),\]]*)?)")
_DIVISION = re.compile(r"//?\d")  # `x // 2**20` in code, not a path
_REDIRECT = fast_regex(r"(?:\d?>>?|>\|)\s*([^\s;|&)]+)")  # ($(x 2>/dev/null): the ) ends the substitution)
_READ_REDIRECT = re.compile(r"(?:^|[\s;&|])\d*<(?![<(&])\s*([~/.][^\s;|&<>)]*)")


_BIN_DIRS = ("/usr/bin/", "/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/", "/opt/")
_READABLE = tuple(p + "/" for p in READABLE_PATHS)
# commands that show what a file is (its name, size, sum, mount), not what it holds
_LOOKING_VERBS = frozenset(words("""ls stat file sha256sum sha1sum md5sum b2sum cksum lsblk findmnt blkid
getfacl lsattr readlink realpath namei"""))
_INSPECTING_VERBS = frozenset(words("""ls stat file getcap ldd sha256sum sha1sum md5sum b2sum
strings readlink which du wc cmp diff objdump nm readelf cat head tail"""))
_WORKING_DIR = fast_regex(r"\$\(\s*pwd\s*\)|`\s*pwd\s*`|\$\{?pwd\}?(?!\w)|\$\(\s*git rev-parse --show-toplevel\s*\)"
                          r"|`\s*git rev-parse --show-toplevel\s*`")


_MOUNT_SOURCE = re.compile(r"(?:^|,)(?:source|src)=([^,]+)")


def _mounted_host_paths(segment: list[str]) -> list[str]:
    """The host side of a container command's mounts: `-v /etc:/x`, `--volume=/etc:/x`,
    `--mount type=bind,source=/etc,target=/x`."""
    found = []
    for i, word in enumerate(segment[1:], 1):
        option, _, value = word.partition("=")
        if option in ("-v", "--volume", "--mount") and not value and i + 1 < len(segment):
            value = segment[i + 1]
        if option in ("-v", "--volume"):
            found.append(value.split(":", 1)[0])
        elif option == "--mount":
            found += _MOUNT_SOURCE.findall(value)
    return found


_SED_SCRIPT = re.compile(r"(?<![\w/.-])(?:\d*,?\d*)?s([/|#,:@!])(?:(?!\1)[^\\]|\\.)*\1(?:(?!\1)[^\\]|\\.)*\1[gimpe0-9]*")


_PWD_ROOT = re.compile(r"\$\{pwd%%/[^}]*\}")
_PARENT_DIR = re.compile(r"\$\{pwd(?:%/|/)[^}]*\}|\$\(\s*dirname\s+[\"']?(?:\$\{?pwd\}?|\$\(\s*pwd\s*\)|`pwd`)[\"']?\s*\)")
_MESSAGE_TEXT = re.compile(r"\s(?:-[a-z]*m|--message|--title|--body|--notes)[= ]\s*([\"'])(?:(?!\1).)*\1")


# a command substitution inside a word (a part of a path), not a word of its own
_EMBEDDED_SUBSTITUTION = re.compile(r"(?<=[\w./~-])(?:\$\([^()`]*\)|`[^`]*`)|(?:\$\([^()`]*\)|`[^`]*`)(?=[\w./~-])")


def _unknown_part(m: re.Match[str]) -> str:
    """What a substitution inside a path stands for: in a relative path, a name of the
    workspace's own; in an absolute one, any name (`/workspace/$(x)/notes` may be anyone's);
    at the start, any place."""
    text = m.string
    start = m.start()
    while start > 0 and text[start - 1] not in " \t=<>(,;|&\"'":
        start -= 1
    if m.start() == start:  # (it may give an absolute path: `dirname $PWD`/eng-4)
        return "/*" if text[m.end():m.end() + 1] == "/" else "_"
    return "*" if text[start:start + 1] in ("/", "~") else "_"


def _paths_in_shell(view: str, commands_only: bool = False, done: set[str] | None = None
                    ) -> Iterator[Reach]:
    """(path, written) for the paths a shell command names after its verb (a command's own
    path, as in `/usr/bin/env python`, is not a place it reaches), relative ones joined to
    the directory `cd` moved to. `commands_only`: only in segments that start with a known
    command (a view of code, not of a shell line). `done`: segments already read in this
    call's other views (views repeat most of each other), skipped unless after a `cd`."""
    if "pwd%" in view or "pwd/" in view or "dirname" in view:
        # ${PWD%/*}, $(dirname "$PWD"): the folder above; ${PWD/me/you}: a sibling of it
        view = _PARENT_DIR.sub("..", _PWD_ROOT.sub("", view))  # (${PWD%%/*}: the root)
    view = _WORKING_DIR.sub(".", view) if "pwd" in view or "show-toplevel" in view else view
    if "sed" in view or view.startswith("s/") or " s/" in view:  # a sed script's s/old/new/ names no
        # path (nor does it as a view of its own: the quoted text of `xargs sed -i 's/a/b/'`)
        view = _SED_SCRIPT.sub(" ", view)
    if " -m" in view or "--message" in view or "--title" in view or "--body" in view:
        view = _MESSAGE_TEXT.sub(" ", view)  # nor does a commit's or a PR's message
    if not commands_only:
        for m in _REDIRECT.finditer(view):
            yield m.group(1), True
        if "<" in view:  # exec 3</path, cmd < /path: read
            for m in _READ_REDIRECT.finditer(view):
                yield m.group(1), False
    if "'" in view or '"' in view:  # a quoted | or ; is text (grep's "a|b"), not the end of a command
        view = _QUOTED.sub(_as_text, view)
    if "$(" in view or "`" in view:  # exports/$(date +%F)/: one word, the substitution read on its own
        view = _EMBEDDED_SUBSTITUTION.sub(_unknown_part, view)
    cwd = ""
    find_changes = "find" not in view or bool(_FIND_CHANGES.search(view))
    for text in _SEGMENT.split(view):
        segment = text.split()
        if not segment:
            continue
        if done is None or cwd or text not in done:
            yield from _segment_paths(segment, cwd, commands_only, find_changes)
            if commands_only and ">" in text and segment[0].rsplit("/", 1)[-1] in _COMMANDS:
                for m in _REDIRECT.finditer(text):  # a command in code writes where it redirects
                    yield m.group(1), True
            if done is not None and not cwd:
                done.add(text)
        if segment[0] in ("cd", "pushd") and len(segment) > 1:
            cwd = posixpath.join(cwd, segment[1])


# (a pattern: /^5/, /a|b/, /x$/; a glob's * ? [ ] are a path's: ls /*/)
_REGEX_LITERAL = re.compile(r"/(?:\^|[^/]*[$+\\|][^/]*/$|[^/\s]{1,40}/[)}\],;]+$)")  # (JS's {$not: /@/})
_ARRAY = re.compile(r"\w+\+?=\(")
_ONLY_SLASH = re.compile(r"//?")
_ONLY_SLASHES = re.compile(r"[/*\\]*\*[/*\\]*")  # (a pattern's /**/ cut out at its |: no command)
_AWK_PROGRAM = re.compile(r"[{}();]|\$[\d/]|^/.*[$^]")
_CIDR = re.compile(r"[\d.]+/\d{1,2}|[0-9a-f:]+/\d{1,3}")
# words that start a command without being it
_PREFIX_WORDS = frozenset({"do", "then", "else", "!", "{", "time", "nohup", "command", "builtin"})


_SUDO_VALUE_OPTIONS = frozenset({"-u", "-g", "-c", "-d", "-p", "-r", "-t", "-h", "--user", "--group"})


def _after_sudo(segment: list[str]) -> list[str]:
    """`sudo -u postgres tail /x` -> `tail /x` (views are lower case: -C, -D, -U read as -c, -d, -u)."""
    i = 1
    while i < len(segment) and segment[i].startswith("-"):
        i += 2 if segment[i] in _SUDO_VALUE_OPTIONS else 1
    return segment[i:]


# find doing more than listing: deleting, running a command or writing a file on what it
# finds, or handing its list on to a command that may change what it names, through a pipe or
# as the words of a substitution (read in the whole line: `\( ... \)` cuts a find into segments)
_FIND_CHANGES = fast_regex(r"\s-(?:delete|exec|ok|fprint|fls)|\|\s*(?:sudo\s+)?(?:xargs|while|parallel)\b"
                           r"|(?:\$\(|`)\s*(?:sudo\s+)?find\b")


def _segment_paths(segment: list[str], cwd: str, commands_only: bool, find_changes: bool
                   ) -> Iterator[Reach]:
    while segment[0] in _PREFIX_WORDS and len(segment) > 1:  # `do /usr/bin/time ...`: the command after
        segment = segment[1:]
    if segment[0] in ("sudo", "doas") and len(segment) > 1:  # the command it runs is what reaches a path
        segment = _after_sudo(segment) or segment
    verb = segment[0]
    if (len(verb) > 1 and verb.endswith(":")) or (verb == "-" and len(segment) > 1 and segment[1].endswith(":")):
        return  # a key of a YAML or JSON document (a here-doc's lines, `- expr: ...`), not a command
    if verb in ("/", "..", "!~") or (verb == "." and len(segment) == 1) or _ONLY_SLASHES.fullmatch(verb):
        return  # ( $a - $b ) / 86400: a division in a sum, no command (nor a pattern's '..|.' or '!~ /re/' cut at its |)
    if commands_only and verb.rsplit("/", 1)[-1] not in _COMMANDS:
        return
    if verb.startswith(("/", "~", "..")) and not verb.startswith(_BIN_DIRS) and not _DIVISION.match(verb) \
            and not (verb == "~" and len(segment) > 1 and _REGEX_LITERAL.match(segment[1])):
        yield posixpath.join(cwd, verb.split("(", 1)[0]), False  # a file named on its own, or run from there
        # (a regex's /app(/.*)? cut at its `)`: the path is before its group)
    writes: bool | None = None if verb in _LOOKING_VERBS else verb in _WRITING_VERBS or verb.endswith("rm")
    args = segment[1:]
    if verb == "find" and not find_changes:
        writes = None  # it lists names (and sizes, times), changing nothing
    if verb == "for" or _ARRAY.match(verb):  # values, not yet places: endpoints=(/healthz /v1/status)
        args = [w for w in segment if on_file_system(w.split("=(", 1)[-1])]
    if verb in ("df", "du", "basename", "dirname"):
        return  # sizes and free space, or names: not contents
    if verb == "git" and _git_subcommand(args) in _GIT_READS:
        writes = False  # the repository it is pointed at (-C DIR, --git-dir) is read
    target = _copy_target(args) if verb in ("cp", "rsync") else None
    if verb == "rsync" and any(a == "--dry-run" or (a[:1] == "-" and a[1:2] != "-" and "n" in a)
                               for a in args):
        writes = False  # it lists what it would copy
    if verb == "sed":  # its script's addresses (/re/,/re/p; a quoted one split at its spaces) are no paths
        writes = any(a.startswith(("-i", "--in-place")) for a in args)
        args = [a for a in args if not ("/," in a or (a.strip("'\"").startswith("/") and a.strip("'\"").endswith(
            ("/p", "/d", "/"))))]
    if verb == "ln":  # a symbolic link's relative target is found from the link's own folder
        names = [a for a in args if not a.startswith("-")]
        if len(names) == 2 and not names[0].startswith(("/", "~")) and any(
                a == "--symbolic" or (a.startswith("-") and not a.startswith("--") and "s" in a) for a in args):
            args = [posixpath.join(posixpath.dirname(names[1]), names[0]), names[1]]
    if verb == "tar":
        if "-c" in args or "--directory" in args:  # names after -C DIR are in DIR (views are lower case)
            args = _tar_names(args)
        if args and _TAR_CREATES.match(args[0]):  # what it archives is read; only the archive is written
            writes = False
    if verb in ("docker", "podman"):  # container paths are not the host's: only mounts' host side
        args = _mounted_host_paths(segment)
    elif verb in ("ssh", "mosh"):  # nor are a remote command's: only the local files it is given
        args = [b for a, b in itertools.pairwise(args) if a in ("-i", "-F", "-E", "-S")]
    elif verb in ("curl", "wget"):  # its operands are URLs ("$API/v1/x" too); files only by flag or @
        yield from ((posixpath.join(cwd, path), written) for path, written in _transfer_files(args))
        return
    elif verb in _CLOUD_CLIS:  # its names are a cloud's (log groups, scopes); files only by flag
        args = [w.removeprefix("file://").removeprefix("fileb://") for w in args
                if w.startswith(("file://", "fileb://"))] + [
            b for a, b in itertools.pairwise(args) if a in _FILE_FLAGS]
    if any(_REGEX_LITERAL.match(a) for a in args):  # awk's `$9 ~ /^5/`: a pattern and its match, no paths
        args = [a for a, after in zip(args, [*args[1:], ""], strict=True)
                if not _REGEX_LITERAL.match(a) and not (a == "~" and _REGEX_LITERAL.match(after))]
    if verb in ("awk", "gawk", "mawk", "nawk"):  # its program's words: patterns and actions, no paths
        args = [a for a in _awk_files(args) if not _AWK_PROGRAM.search(a)]
    if verb == "tr":
        return  # sets of characters (tr '/:' '__'), and only ever its input
    if verb in ("grep", "egrep", "fgrep", "zgrep", "zegrep", "xzgrep", "bzgrep", "rg", "ag", "ack", "jq", "yq"):
        # its pattern (filter) is text, not a path
        args = _grep_files(args)
    if verb in _TEXT_VERBS:  # (and where `--git-dir=/...`-like options point)
        args = [w.split("=", 1)[-1] for w in args if w.split("=", 1)[-1].startswith(("/", "~", ".."))
                and (w.startswith(("/", "~", "..")) or w.startswith("--")) and verb not in ("echo", "printf")]
    if verb in _INSPECTING_VERBS:  # looking at a program or library is no reach outside
        args = [w for w in args if not (w.startswith(_READABLE) or w in READABLE_PATHS)]
    for word in args:
        if "://" in word or _CIDR.fullmatch(word):
            continue  # (10.20.1.0/24 is a network, not a path)
        if (_ONLY_SLASH.fullmatch(word.strip("\"'")) and verb.rsplit("/", 1)[-1] not in _ROOT_READERS) \
                or (word == "/.*" and not writes):
            continue  # (jq's `.kind + "/" + .name` or `.a // .b` with its quotes taken off: text, not
            # the root; a regex's (/.*)?)
        if verb == "dd" and word.startswith("if="):
            yield posixpath.join(cwd, word[3:]), False
            continue
        if "/" in word or ".." in word:
            if _SEARCH_PATH.match(word):
                continue  # PATH=/usr/bin:/bin: where programs are looked for, not files read
            written = writes if target is None or word == target else False  # a copy's source
            for m in _PATHLIKE.finditer(word if "=" not in word else word.split("=", 1)[1]):
                if m.group(1) != "/.*" or written:
                    yield posixpath.join(cwd, m.group(1).rstrip(",;:")), written
        if verb in _READING_VERBS and not word.startswith("-") and "/" in word:
            yield posixpath.join(cwd, word), False


# curl's and wget's options whose file they write (views are lower case: curl -o and wget -O
# alike; curl -D, a header file, reads like -d, whose data is no file unless it is @file)
_TRANSFER_WRITES = frozenset({"-o", "--output", "--output-document", "-p", "--directory-prefix", "-c",
                              "--cookie-jar", "-d", "--dump-header", "-a", "--append-output", "--output-file",
                              "--save-cookies", "--trace", "--trace-ascii", "--stderr", "--etag-save"})
_AT_FILE = re.compile(r"(?:^|=|^-\w)[@<]([^;,\s]+)")
_LOCAL = ("/", "~", "../", "./")


def _transfer_files(args: list[str]) -> Iterator[Reach]:
    """The files curl or wget reaches: an option's value that is a path (written when the
    option saves to it), --option=path, and the @file of a body or a form field. Its other
    operands are URLs, whatever a variable before them holds ("$API/v1/items")."""
    for before, word in itertools.pairwise(["", *args]):
        word = word.strip("\"'")
        option, eq, value = word.partition("=")
        if m := _AT_FILE.search(word):
            yield m.group(1), False  # -d @body.json, -F file=@x, --data-binary=@x, -d@x
        elif before.startswith("-") and word.startswith(_LOCAL):
            yield word, before in _TRANSFER_WRITES
        elif eq and option.startswith("--") and value.startswith(_LOCAL):
            yield value, option in _TRANSFER_WRITES


# git commands that only read the repository
_GIT_READS = frozenset(words("""log show diff status blame grep ls-files ls-tree cat-file describe
shortlog rev-list rev-parse"""))
_GIT_VALUE_OPTIONS = frozenset({"-c", "--git-dir", "--work-tree", "--namespace"})


def _git_subcommand(args: list[str]) -> str:
    """git's command after its own options (-C DIR reads as -c DIR: views are lower case)."""
    rest = iter(args)
    for a in rest:
        if a in _GIT_VALUE_OPTIONS:
            next(rest, "")
        elif not a.startswith("-"):
            return a
    return ""


def _copy_target(args: list[str]) -> str | None:
    """The one name a copy writes: its last word, when the words end in sources and a
    target. None (every name may be written) when an option names the target (-t; -T reads
    the same in a lower-case view) or removes the sources, or the last words are not plain
    names (an option's value, a redirection)."""
    if len(args) < 2 or any(a.startswith(("-t", "--target-directory", "--remove-source"))
                            or ">" in a or "&" in a for a in args):
        return None
    last, before = args[-1], args[-2]
    if last.startswith("-") or before.startswith("-") or "/" not in last + before:
        return None
    return last


def _awk_files(args: list[str]) -> list[str]:
    """awk's words without its program: the first word that is no option (or option's
    value), skipped to its closing quote when its spaces cut it into words. Views are lower
    case, so -F (a separator) reads as -f (a program file): a program file ends in .awk."""
    out: list[str] = []
    rest = iter(args)
    for a in rest:
        if a in ("-f", "-v") or a.startswith("--"):
            following = next(rest, "") if a in ("-f", "-v") else ""
            if following.endswith(".awk"):
                out.append(following)  # a program read from a file: every other word is a file
                return out + [w for w in rest if not w.startswith("-")]
        elif a.startswith("-"):
            continue  # -F: and -vx=1 written as one word
        else:
            closing = a[0] if a[:1] in "'\"" and (len(a) == 1 or not a.endswith(a[0])) else ""
            for w in rest:
                if not closing:
                    out.append(w)
                elif w.endswith(closing):
                    closing = ""
            return out
    return out


# commands whose word "/" is the root they reach (elsewhere a lone / is text cut from a program)
_ROOT_READERS = frozenset(words("""ls cat find du tar zip cpio rsync scp cp mv rm rmdir chmod chown chgrp
chattr setfacl getfacl grep egrep rg ag ack locate tree fd shred wipe srm mount umount chroot nsenter
xargs nice ionice timeout env exec stat file tee dd borg restic rclone s3cmd gsutil azcopy ncdu sh bash
zsh python python3 perl ruby node cd pushd open 7z zstd gzip xz bzip2 strings wc sha256sum md5sum
diff sed awk truncate touch ln install mkdir lsattr"""))
_TAR_CREATES = re.compile(r"-?[a-z]*c[a-z]*$|--create$")


def _tar_names(args: list[str]) -> list[str]:
    """tar's words with the names that follow a -C DIR joined to DIR (`-C / home root etc`
    archives /home, /root and /etc)."""
    out: list[str] = []
    directory = ""
    words = iter(args)
    for a in words:
        if a in ("-c", "--directory") and not directory:
            following = next(words, "")
            if following.startswith("-"):  # (tar -c -f x: -c is "create")
                out.append(following)
                continue
            directory = following
            out.append(directory)
        elif directory and not a.startswith("-") and not a.startswith(("/", "~")):
            out.append(posixpath.join(directory, a))
        else:
            out.append(a)
    return out


_PATTERN_FLAG = re.compile(r"-[a-z]*e|--regexp")


def _grep_files(args: list[str]) -> list[str]:
    """grep's words without its pattern: the first word that is no option, or those that
    follow -e (then every other word is a file)."""
    out: list[str] = []
    # (-hie: flags ending in e, which takes the pattern; -E lower-cased looks the same, and the
    # pattern follows it too)
    given = any(_PATTERN_FLAG.fullmatch(a) or a.startswith("--regexp=") for a in args)
    skip_next = False
    closing = ""  # (a quoted pattern cut into words at its | : skipped to its closing quote)
    for a in args:
        if closing:
            closing = "" if a.endswith(closing) else closing
        elif skip_next or (not a.startswith("-") and not given):
            skip_next, given = False, True  # the pattern
            if a[:1] in "'\"" and (len(a) == 1 or not a.endswith(a[0])):
                closing = a[0]
        elif _PATTERN_FLAG.fullmatch(a):
            skip_next = True
        else:
            out.append(a)
    return out


_CLOUD_CLIS = frozenset({"aws", "gcloud", "az", "kubectl", "helm", "vault", "consul", "nomad", "gsutil", "oc"})
_FILE_FLAGS = frozenset({"-f", "--filename", "--file", "--kubeconfig", "--key-file", "--values", "--from-file",
                         "--cli-input-json", "--template-file"})
_COMMANDS = frozenset(words("""ls cat head tail less more grep egrep find cp mv rm rmdir
mkdir touch chmod chown ln tar zip unzip gzip gunzip curl wget scp rsync sed awk tee dd
echo printf cd stat file du df wc sort uniq diff cut tr xargs sh bash zsh python python3
perl ruby node nc ncat shred truncate install vi vim nano emacs ed mount umount strings xxd
od nl base64 openssl cpio sudo doas unlink chattr setfacl"""))
_READING_VERBS = frozenset({"cat", "head", "tail", "less", "more", "cp", "tar", "zip", "grep",
                            "strings", "xxd", "base64", "od", "source", "."})
_WRITING_VERBS = {"rm", "rmdir", "mv", "cp", "tee", "touch", "mkdir", "ln", "chmod", "chown",
                  "truncate", "dd", "install", "rsync", "unlink", "shred", "sed", "tar", "unzip",
                  "find", "git"}
_TEXT_VERBS = frozenset({"echo", "printf", "grep", "egrep", "rg", "git", "logger", "wall"})
# a call with a string first argument: found by its `(` (a search skips to it in C), the
# function named before it then looked up (an alternation of names is tried everywhere)
_STRING_ARGUMENT = re.compile(r"\(\s*[rbuf]{0,2}[\"']([^\"']+)[\"']")
_READING_FUNCTIONS = frozenset(words("""open open_file path listdir scandir walk glob read_text read_bytes load
loadtxt read_csv exists stat isfile isdir"""))
_RUNS_COMMAND = frozenset(words("system popen run call check_output check_call"))
_WRITE_MODE = re.compile(r"\s*,\s*(?:mode\s*=\s*)?[rbuf]?[\"'][rbt]*[wax+]")
_PATH_FUNCTIONS = frozenset(words("""open path remove unlink rmtree rmdir makedirs mkdir rename
replace move chmod chown listdir
scandir walk glob read_text read_bytes write_text write_bytes load loadtxt read_csv to_csv
exists stat open_file isfile isdir system popen run call check_output check_call"""))


def _path_calls(view: str) -> Iterator[Reach]:
    """(path, written) for the string first arguments of calls that open, change or run a
    path: open() writes with a w, a, x or + mode; the others by their name."""
    for m in _STRING_ARGUMENT.finditer(view):
        name = _name_before(view, m.start())
        if name and (name in _PATH_FUNCTIONS or name.startswith("copy")):
            if name in _RUNS_COMMAND and " " in m.group(1):
                continue  # a command line, not a path (the shell's reading finds its paths)
            written = name not in _READING_FUNCTIONS or (name in ("open", "open_file") and bool(
                _WRITE_MODE.match(view, m.end())))
            yield m.group(1), written


def _name_before(view: str, at: int) -> str:
    """The word just before `at` (spaces skipped): a function's name before its `(`."""
    end = at
    while end > 0 and view[end - 1] == " ":
        end -= 1
    start = end
    while start > 0 and end - start < 40 and (view[start - 1].isalnum() or view[start - 1] == "_"):
        start -= 1
    return view[start:end]


# files whose lines are run later as commands: shell scripts, git hooks
_RUN_LATER = re.compile(r"\.(?:sh|bash|zsh)$|(?:^|/)(?:" + HOOK_FOLDERS + ")")
_PRIVATE_PLACE = re.compile(r"(?:~|/root|/home|/etc)(?:/|$)")
_REMOVES = re.compile(r"\b(?:rm|shred|unlink|rmdir|truncate|dd|mkfs\w*|wipefs)\b|\s-delete\b")
_CODE_ARGUMENTS = ("command", "cmd", "script", "shell", "code", "source", "program")
_SHELL_ARGUMENTS = ("command", "cmd", "script", "shell")


def paths_of(call: ToolCall) -> Iterator[Reach]:
    """(path, written) for every path the call reaches, as written."""
    kind = call.action_type
    if "path" in call.texts:
        yield call.texts["path"], kind in ("fs:write", "fs:delete")
    for name, vs in call.argument_views.items():
        for v in vs:
            if "file://" in v:
                for m in _FILE_URL.finditer(v):
                    yield m.group(1), False
        if name in _CODE_ARGUMENTS:
            yield from _paths_in_code(vs, commands_only=name not in _SHELL_ARGUMENTS)
        elif name == "content" and kind == "fs:write" and _RUN_LATER.search(call.text("path").lower()):
            # a script or hook written now runs later: what its commands delete or overwrite,
            # and the users' and the system's own files they read (where it runs from, relative
            # paths are not known)
            removes = any(_REMOVES.search(v) for v in vs)
            yield from ((p, w) for p, w in _paths_in_code(vs, commands_only=True)
                        if (w and removes) or (not w and _PRIVATE_PLACE.match(p) and ".." not in p))
        elif name in ("query", "sql"):
            for v in vs:
                for m in SQL_FILE.finditer(v):
                    path = next(g for g in m.groups() if g).strip("'")
                    yield path, not m.group(0).startswith(("pg_read", "load_file", "lo_import", "openrowset", "bulk", "load")) \
                        and not _COPY_FROM.match(m.group(0))  # (COPY t FROM '/file' reads it)


_COPY_FROM = re.compile(r"copy\s+(?:[\w.\"]+|\(.*?\))\s+from\s+'")
_WRITES_FILE = fast_regex(r"\bopen\([^)]*,\s*[\"'][rb+]*[wax]|\.write(?:_text|_bytes)?\(")


def _paths_in_code(views: tuple[str, ...], commands_only: bool) -> Iterator[Reach]:
    done: set[str] = set()  # shell segments read already (the views repeat one another)
    for v in views:
        if "(" in v:
            yield from _path_calls(v)
            yield from _python_path_expressions(v)
        if _LONE_PATH.fullmatch(v):  # a path on its own: hidden, then handed to a command
            written = any(_WRITES_FILE.search(w) for w in views)  # (written if a file is)
            if written or not v.startswith(_READABLE):  # (a program named to be run is no read)
                yield v, written
        yield from _paths_in_shell(v, commands_only, done)


_FILE_URL = fast_regex(r"\bfile://(/[^\s\"'`]+)")
# paths Python builds rather than writes out: os.path.join('/', 'etc', ...), Path.home() / '.ssh'
_PY_JOIN = fast_regex(r"\b(?:join|joinpath)\(\s*((?:[rbuf]?[\"'][^\"']*[\"']\s*,\s*)+[rbuf]?[\"'][^\"']*[\"'])\s*\)")
_SLASH_JOIN = fast_regex(r"[\"']/[\"']\.join\(\s*[\[(]((?:\s*[rbuf]?[\"'][^\"']*[\"']\s*,?)+)\s*[\])]\s*\)")
_PY_HOME = fast_regex(r"\b(?:path\.home\(\)|expanduser\(\s*[\"']~[\"']\s*\))((?:\s*[/,]\s*[\"'][^\"']+[\"'])*)")
_PY_EXPANDUSER = fast_regex(r"\bexpanduser\(\s*[\"'](~[^\"']*)[\"']")
_PY_STRING = fast_regex(r"[\"']([^\"']*)[\"']")


def _python_path_expressions(view: str) -> Iterator[Reach]:
    """(path, written) for the paths code puts together from parts."""
    if "join(" in view or "joinpath(" in view:
        for m in _PY_JOIN.finditer(view):
            yield posixpath.join(*_PY_STRING.findall(m.group(1))), True
        for m in _SLASH_JOIN.finditer(view):
            yield posixpath.normpath("/".join(_PY_STRING.findall(m.group(1))) or "/"), False
    if "path" in view and (".parent" in view or "/" in view):
        yield from _pathlib_paths(view.replace("path.cwd()", "path('.')"))
    if "home()" in view or "expanduser(" in view:
        for m in _PY_HOME.finditer(view):
            yield posixpath.join("~", *_PY_STRING.findall(m.group(1))), True
        for m in _PY_EXPANDUSER.finditer(view):
            yield m.group(1), True


# pathlib: Path('/workspace/a').parent / 'b' / 'c', also through a name given the Path
_PATHLIB = re.compile(r"\bpath\(\s*[rbuf]?[\"']([^\"']+)[\"']\s*\)((?:\s*\.parent)*)((?:\s*/\s*[rbuf]?[\"'][^\"']+[\"'])*)")
_PATH_NAME = re.compile(r"\b(\w+)\s*=\s*(path\(\s*[rbuf]?[\"'][^\"']+[\"']\s*\))")


def _pathlib_paths(view: str) -> Iterator[Reach]:
    names = dict((n, e) for n, e in _PATH_NAME.findall(view))
    for name, expression in names.items():
        view = re.sub(rf"(?<![\w.]){re.escape(name)}(?=\s*(?:\.parent\b|/))", expression.replace("\\", r"\\"), view)
    for m in _PATHLIB.finditer(view):
        if not m.group(2) and not m.group(3):
            continue  # a Path on its own is a string path, read elsewhere
        path = m.group(1)
        for _ in range(m.group(2).count(".parent")):  # (as pathlib: '/' stays, '.' and 'x' give '.')
            path = "/" if path.startswith("/") and path.strip("/") == "" else (
                posixpath.dirname(path.rstrip("/")) or ".")
        yield posixpath.join(path, *_PY_STRING.findall(m.group(3))), False


# (from a folder a file system has: "/v1/checkout" on its own is a web route)
_LONE_PATH = fast_regex(r"(?:~|\.\.)/[\w.\-/~]*|/(?:etc|root|home|var|srv|opt|usr|proc|sys|dev|boot|mnt|media|tmp|run"
                        r"|lib|lib64|bin|sbin|workspace|data|backups?|secrets?)(?:/[\w.\-/~]*)?")
