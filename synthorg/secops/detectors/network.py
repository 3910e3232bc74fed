"""The exfiltration family: code fetched and run, the workspace exposed, secrets or data
sent to hosts outside the company, command output put in a URL."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator
from urllib.parse import unquote_plus

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import _PROSE, MESSAGE_ACTIONS
from synthorg.secops.detectors.credentials import SECRET_FILE, SECRET_VALUE, SECRET_VAR, env_dumped
from synthorg.secops.detectors.patterns import (
    DECLINING_WORDS,
    REPORTING_WORDS,
    AnyOf,
    Hinted,
    finding,
    hosts_of,
)
from synthorg.secops.detectors.sensitive_data import DUMP_CONTENT, personal_data
from synthorg.secops.messages import _encoded_blob, _table, shares_secret
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import LOCAL_URL, MAIL_ADDRESS, hosts_in, image_registry, is_internal

_NET_SEND = Hinted(fast_regex(
    r"\b(?:urlopen|requests\.get|httpx\.get|\.get)\(\s*[\"']https?://[^\"']*[?&][\w-]+=[\"']\s*\+|\|\s*xargs\b[^;&]*\bcurl\b|\bcurl\b[^;&|]*(?:\s-[a-z]*[dt]\b|\s-[a-z]*f\s+[\"']?[\w.:-]+=|\s--data\S*|\s--form\b|\s--upload-file\b|\s-[a-z]*x\s*(?:post|put|patch)\b"
    r"|\s@\S|\s-h\s*\S*authorization)|\bwget\b[^;&|]*--(?:post-data|post-file|body-file|body-data|method[= ](?:post|put))"
    r"|\b(?:nc|ncat|netcat|socat|telnet)\b(?![^;&|]*\s-[a-y]*z)|/dev/(?:tcp|udp)/|\b(?:scp|sftp|rsync)\b[^;&|]*\S+:\S*"
    r"|\bftp\b\s|\b(?:mail|mailx|sendmail|mutt)\b[^;&|]*@|\bssh\b[^;&|]*@"
    r"|\b(?:dig|nslookup|host)\b[^;&|]*(?:\$\(|`|\b[a-z0-9]{24,}\.|\$\{?\w+\}?\.[\w-]+\.)"
    # a URL's query made of data encoded in place: "http://x/?d=" . base64_encode(...)
    r"|(?:https?|ftp)://[^\s\"']*\?[^\s\"']*[\"']?\s*[.+]\s*[\w.]*(?:base64_encode|btoa|b64encode|encodeuricomponent"
    r"|urlencode|quote(?:_plus)?|hexlify)\("
    r"|\bxargs\s+(?:-\S+\s+)*-i\s*(\S+)\s+(?:dig|nslookup|host)\b[^;&|]*\s\1\.[\w-]+\.[\w.-]+"  # (each line a name)
    # each line read into a URL's query or a name looked up: `| while read l; do curl "x?d=$l"`
    r"|\|\s*while\s+(?:ifs=\S*\s+)?read\s+(?:-r\s+)?(?P<line>\w+)\s*;\s*do\b[^;]*\b(?:curl|wget|dig|nslookup|host)\b[^;]*\$\{?(?P=line)\b"
    r"|\b(?:gethostbyname(?:_ex)?|getaddrinfo|resolve|query)\(\s*f[\"'][^\"']*\{[^}]+\}[^\"']*\.[a-z0-9-]+\.[a-z]{2,}"
    r"|\bping\b[^;&|]*\s-p\s*(?:\$|`)"
    r"|\brequests\.(?:post|put|patch)\b|\burlopen\([^)]*data=|\burlopen\(\s*[^,()]+,\s*(?!timeout\b|context\b|cafile\b|capath\b)[^)\s]|\.(?:post|put|patch)\([^)]*\b(?:json|data|files)\s*=|\bhttpx\.(?:post|put)\(|\.sendall?\(|\bsmtplib\b"
    r"|\bsocket\.(?:socket|create_connection)\b|\bhttp\.client\b|\bftplib\b|\bparamiko\b|\bboto3\b[^;]*\bupload"
    r"|\bset_tracking_uri\([^)]*\)[\s\S]*\blog_(?:artifacts?|model|table|dict|text|figure|input)\("  # (an experiment tracker's)
    r"|\bgit remote (?:add|set-url)\b|\bsmbclient\b|\btftp\b|\.(?:post|put|patch|post_form)\(\s*(?:(?:uri|url|new\s+url)\(\s*)?[\"']https?://"
    r"|\bgit push\b[^;&|]*\s(?:(?:https?|ssh|git)://|[\w.-]+@[\w.-]+:)|\baws s3 (?:cp|sync|mv)\b[^;&|]*\bs3://"
    r"|\bsftp\b[^;&|]*@|\blftp\b|\bopenssl s_client\b|\bgsutil\b[^;&|]*\b(?:cp|mv|rsync)\b[^;&|]*gs://"
    r"|\bgcloud storage (?:cp|mv|rsync)\b|\baz storage (?:blob|file) upload|\bazcopy (?:copy|sync)\b"
    r"|\.(?:upload_file|upload_fileobj|put_object)\("
    r"|\brequest\([^)]{0,300}\bdata\s*=(?!\s*none\b)"  # (urllib.request.Request(url, data=...), session.request)
    r"|\bfetch\([^)]*method\s*:\s*[\"']?(?:post|put)"
    r"|\bio::socket::(?:inet|ssl|ip)\b|\blwp::useragent\b[^;]*\b(?:post|put)\b|\bhttp::tiny\b[^;]*\b(?:post|put|request)\b"
    # PowerShell's web requests that send: a file (-InFile) or a body by POST or PUT
    r"|\b(?:invoke-webrequest|invoke-restmethod|iwr|irm)\b[^;|]*(?:-infile\b|-method\s+[\"']?(?:post|put|patch)\b)"), (
    "curl|wget|nc|ncat|netcat|socat|telnet|/dev/tcp|/dev/udp|scp|sftp|rsync|ftp|mail|ssh|dig|gethostbyname|getaddrinfo|resolve(|query(|ping|"
    "nslookup|host|requests.|urlopen|httpx|send|smtplib|socket.|http.client|ftplib|paramiko|boto3|"
    "git remote|git push|aws s3|fetch(|smbclient|tftp|.post(|.put(|.patch(|lftp|s_client|gsutil|"
    "gcloud storage|az storage|azcopy|upload_file|put_object|request(|io::socket|lwp::|http::tiny|xargs|"
    "base64_encode|btoa|b64encode|encodeuri|urlencode|quote|hexlify|invoke-|iwr|irm"))
# the workspace or a service opened to the internet, or data made public
_EXPOSE = Hinted(fast_regex(
    r"\bngrok\s+(?:http|tcp|tls|start)\b|\bcloudflared\b[^;&|]*\btunnel\b|\blt\s+--port\b|\blocaltunnel\b"
    r"|\bssh\b[^;&|]*\s-\w*r\s*\S*\d+:[^;&|]*(?:serveo|localhost\.run|pinggy)|\bbore local\b"
    # a tunnel's local end bound to every interface: what it reaches is open to the whole network
    r"|\bssh\b[^;&|]*\s-\w*[lr]\s*(?:0\.0\.0\.0|\*|\[::\]):\d+:"
    r"|--acl\s+public-read|\bacl (?:set|ch)\b[^;&|]*(?:public-read|allusers)|\biam ch allusers"
    r"|\bhttp\.server\b[^;&|]*(?:--bind|-b)\s*0\.0\.0\.0[^;&|]*(?:--directory|-d)\s*/(?:\s|$)"
    r"|\brclone (?:copy|sync|move|copyto)\s+\S+\s+:?[\w-]+(?:,\S*?)?:|\bgh repo create\b[^;&|]*--public|\bgh gist create\b"
    # cloud snapshots, images and buckets shared with other accounts or everyone
    r"|\bmodify-(?:db-)?snapshot-attribute\b[^;&|]*(?:--operation-type\s+add|--values-to-add)|\bmodify-image-attribute\b[^;&|]*launch"
    r"|\bput-bucket-policy\b[^;&|]*principal\W+\*|\bput-public-access-block\b[^;&|]*=false|\bdelete-public-access-block\b"
    r"|\bset-permission\b[^;&|]*--public-access\s+(?:blob|container)|\bpublic-access\s+(?:blob|container)\b"
    r"|\bgh\s+repo\s+edit\b[^;&|]*--visibility[= ]public|\bgh\s+api\b[^;&|]*\bprivate=false\b|visibility[\"']?\s*:\s*[\"']public"
    r"|\bmake_public\(\)|\bacl\s*=\s*[\"']public-read|[?&]x-amz-acl=public|\bperm_type\s*=\s*[\"']anyone"
    r"|\.share\([^)]*\banyone\b"
    r"|\b(?:block_public_(?:acls|policy)|restrict_public_buckets|ignore_public_acls)\s*=\s*false\b"
    r"|\bacl\s*=\s*[\"']public-read(?:-write)?[\"']|--member=(?:allusers|allauthenticatedusers)\b"
    r"|[\"']acl[\"']\s*:\s*[\"']public-read|\bprincipal[\"']?\s*[=:]\s*(?:\{\s*[\"']?aws[\"']?\s*[=:]\s*)?[\"']\*[\"']"
    # the firewall opened to everyone
    r"|\bauthorize-security-group-ingress\b[^;&|]*0\.0\.0\.0/0|\bfirewall-rules\s+(?:create|update)\b[^;&|]*0\.0\.0\.0/0"
    r"|\bnsg rule create\b[^;&|]*(?:\*|internet|0\.0\.0\.0/0)|\bufw allow\s+(?:from\s+any\s+to\s+any\s+port\s+)?(?:22|23|3389|5432|3306|6379|27017|9200)\b"
    r"|\biptables\b[^;&|]*-j\s+accept\b[^;&|]*0\.0\.0\.0/0|\biptables -p input accept\b"), (
    "ngrok|cloudflared|lt --port|localtunnel|ssh|bore local|acl|allusers|http.server|rclone|gh repo|gh gist|"
    "security-group|firewall-rules|nsg rule|ufw|iptables|snapshot-attribute|image-attribute|bucket-policy|"
    "public-access|make_public|public-read|x-amz-acl|anyone|visibility|private=false|block_public|public_buckets|public_acls|allusers|allauthenticatedusers"))
_FETCH_EXEC = Hinted(fast_regex(r"\b(?:curl|wget|fetch|iwr|invoke-webrequest|dig|nslookup)\b[^;&]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b"
                         r"|\b(?:curl|wget)\b[^;&]*\|\s*python[0-9.]*\b(?!\s+-m\s+json\.tool\b)|\bbash\s+<\(\s*(?:curl|wget)"
                         r"|\b(?:exec|eval)\(\s*(?:requests\.get|(?:urllib\.request\.|urllib2\.)?urlopen)"
                         r"|\bsource\s+<\(\s*(?:curl|wget)|\beval\s+[\"']?\$\(\s*(?:curl|wget)\b"
                         r"|\b(?:ba|z|da)?sh\s+-c\s+[\"']?\$\(\s*(?:curl|wget)\b|(?:^|[;&|]\s*)\.\s+<\(\s*(?:curl|wget)"
                         # PowerShell's: iex (iwr URL), iex (new-object net.webclient).downloadstring(URL)
                         r"|\b(?:iex|invoke-expression)\b\s*\(?\s*(?:\(\s*)?(?:iwr|irm|invoke-webrequest|invoke-restmethod"
                         r"|new-object\s+(?:system\.)?net\.webclient)"),
                     "curl|wget|fetch|iwr|invoke-webrequest|dig|nslookup|exec(|eval(|iex|invoke-expression")


# packages and code from a source the agent names: a foreign index, a repository URL, a mirror
# (parts, each searched only where its own words are)
_FOREIGN_SOURCE = AnyOf((
    # (a manifest applied from a URL: whatever it holds runs in the cluster)
    ("kubectl|oc |helm", r"\b(?:kubectl|oc)\s[^;&|]{0,300}\b(?:apply|create|replace)\b[^;&|]{0,300}\s-f[\s=]*(https?://\S+)"
                        r"|\bhelm\b[^;&|]{0,300}\b(?:install|upgrade)\b[^;&|]{0,300}\s(https?://\S+\.tgz)"),
    ("pip|poetry", r"\b(?:pip3?|uv pip|poetry|pipx)\b[^;&|]*\s(?:-i|--index-url|--extra-index-url|--find-links|-f"
                   r"|--trusted-host)[\s=]+(\S+)"),
    ("install|npm|yarn", r"\b(?:pip3?|uv pip|pipx)\s+install\b[^;&|]*\s((?:git\+)?(?:https?|ssh|git)://\S+)"
                r"|\b(?:npm|yarn|pnpm)\s+(?:install|add|i)\b[^;&|]*\s((?:git\+)?(?:https?|git)://\S+)"
                r"|\bgem\s+install\b[^;&|]*--?source\s+(\S+)"),
    ("registry", r"\bnpm\s+(?:config\s+set\s+(?:@[\w-]+:)?registry|set\s+registry)[\s=]+(\S+)|--registry[\s=]+(\S+)"
                 r"|\bregistry\s*[=:]\s*[\"']?(https?://\S+?)[\"']?(?:\s|$)"),
    ("insteadof", r"\bgit\s+config\b[^;&|]*\binsteadof\b[^;&|]*?((?:https?|ssh|git)://\S+)"),
    ("goproxy", r"\bgo\s+env\s+-w\s+goproxy=(\S+)"),
    ("apt-repository|deb ", r"\b(?:add-apt-repository|apt-add-repository)\s+(\S+)|\bdeb\s+(?:\[[^]]*\]\s+)?(https?://\S+)"),
    ("sources -a", r"\bgem\s+sources\s+-a\s+(\S+)"),
    # the same in a package manager's config file (pip.conf, .npmrc, .yarnrc, uv.toml)
    ("index-url", r"\b(?:extra-)?index-url\s*=\s*[\"']?(\S+?)[\"']?(?:\s|$)"
                  # (and in a requirements file, an option line of its own)
                  r"|(?:^|[;\s])--(?:extra-)?index-url[\s=]+(\S+)"),
))
# a file downloaded, then run (each name the download wrote, looked for after it)
_DOWNLOADED = re.compile(r"\b(?:curl|wget)\b[^;&|]*\s(?:-o\s*|-[a-z]*o\s+|--output[\s=]+|-O\s+|>\s*)(?!\w+://)([\w./~-]+)"
                         # (wget, and curl -O, name the file after the URL's last part; views
                         # are lower case, so curl's -o and -O look alike)
                         r"|\b(?:wget\b(?![^;&|]*\s-[oO]\s)|curl\b[^;&|]*\s-[a-zA-Z]*[oO][a-zA-Z]*\s)[^;&|]*?"
                         r"\b(?:https?|ftp)://[^\s;&|/]+/(?:[^\s;&|]*/)?([\w.-]+)(?=[\s;&|]|$)")
_RUNS = r"(?:\b(?:ba|z|da)?sh|\bpython[0-9.]*|\bsource|\bperl|\bnode|\bchmod\s+\S*x\S*|\bdpkg\s+-i|(?<![\w.])\.)\s+(?:-\S+\s+)*(?:\./)?"


def _fetched_then_run(view: str, internal: Iterable[str]) -> bool:
    """A file downloaded from outside the company, then run (the company's own tools, from
    its own servers, are installed like this every day)."""
    for m in _DOWNLOADED.finditer(view):
        name = re.escape((m.group(1) or m.group(2)).removeprefix("./"))
        hosts = hosts_in(view[max(0, view.rfind(";", 0, m.start())):m.end()])
        if hosts and all(is_internal(h, internal) for h in hosts):
            continue
        if re.search(_RUNS + name + r"(?:\s|$|[;&|])", view[m.end():]):
            return True
    return False


# the database itself asked to make a request or a connection out
_SQL_SENDS = Hinted(fast_regex(r"\b(?:net\.)?http_(?:post|put|get|request)\s*\(|\bdblink(?:_connect|_exec)?\s*\(|\butl_http\."
                               r"|\butl_tcp\.|\bsys_eval\s*\(|\bload_file\s*\(\s*concat\s*\(\s*'\\\\"),
                    "http_|dblink|utl_|sys_eval|load_file")
# a warehouse's table functions and engines that store rows at a URL (ClickHouse url()/s3(), ...)
_SQL_SINK = fast_regex(r"\b(?:into\s+function|engine\s*=)\s*(?:url|s3|s3cluster|gcs|azureblobstorage|hdfs)\s*\(\s*'([^']{1,300})'")
# code run from what it decodes, decompresses or unpickles (nothing to read until it runs)
_HIDDEN_CODE = Hinted(fast_regex(r"\b(?:exec|eval)\(\s*(?:compile\(\s*)?(?:zlib|gzip|bz2|lzma|marshal|pickle|codecs|binascii)\."
                          r"|\b(?:exec|eval)\(\s*(?:compile\(\s*)?(?:base64\.\w*decode|bytes\.fromhex|bytearray\.fromhex)\("
                          r"|\bmarshal\.loads\(|\bpickle\.loads\(\s*(?:base64|zlib|bytes\.fromhex|requests|urlopen)"),
                          "exec(|eval(|marshal|pickle")
# what runs code as it loads: pickles (torch.load unless weights_only=True), remote model code
_UNPICKLES = Hinted(fast_regex(r"\b(?:pickle|cloudpickle|dill|joblib)\.loads?\(|\bread_pickle\(|\ballow_pickle\s*=\s*true"
                               r"|\btorch\.load\((?![^\n]*weights_only\s*=\s*true)|\btrust_remote_code\s*=\s*true"),
                    "pickle|dill|joblib|torch.load|trust_remote_code")
# where it comes from: fetched over the network, a bucket's object, a hub's model
_FETCHED_FROM = fast_regex(r"\b(urlopen|urlretrieve|requests\.get|httpx\.get|download_file(?:obj)?|hf_hub_download"
                           r"|snapshot_download|from_pretrained)\s*\(\s*[rbf]?[\"']([^\"']+)[\"']")
_REMOTE_CODE = re.compile(r"\btrust_remote_code\s*=\s*true")


def _loads_foreign_objects(views: tuple[str, ...], internal: Iterable[str]) -> bool:
    """Code that deserialises what it fetched from a host, a bucket or a hub repository that
    is not the company's (a hub's `org/name` is outside unless an internal host is named)."""
    names = [d.split(".")[0] for d in internal]
    for v in views:
        if not _UNPICKLES.search(v):
            continue
        for m in _FETCHED_FROM.finditer(v):
            how, source = m.groups()
            if how in ("from_pretrained", "snapshot_download") and not _REMOTE_CODE.search(v):
                continue  # (a hub's weights are data; its code runs only when trusted)
            hosts = hosts_of(source) if "://" in source else set()
            if hosts:
                if not all(is_internal(h, internal) for h in hosts):
                    return True
            elif not source.startswith((".", "/", "~")) and not any(n and n in source for n in names) \
                    and not any(is_internal(h, internal) for h in hosts_of(v)):
                return True  # (a bucket's or a hub's name, not the company's)
    return False


# a file's content or the environment written to a raw socket
_RAW_SEND = Hinted(fast_regex(r"\.send(?:all|to)?\(\s*(?:open\(|os\.environ|str\(os\.environ|json\.dumps\(dict\(os\.environ)"
                       r"|\.sendfile\(|\bsocket\b[^;]*\.send(?:all)?\(\s*(?:f|fh|data|payload|blob)\.read\(\)"),
                       ".send")


_NON_ASCII_HOST = re.compile(r"(?:https?|ftp|wss?)://[^/\s?#]*[^\x00-\x7f]|@[\w.-]*[^\x00-\x7f][\w.-]*\.\w")


# settings that send the company's events or traffic somewhere: set to an outside URL, it leaks
_REDIRECT_KEY = fast_regex(r"(?:webhook|callback|hook|notify|notification|alert|proxy|endpoint|sink|collector|report|pushurl)"
                           r"[\w-]*[\"']?\s*[:=]\s*[\"']?((?:https?|wss?)://[^\s\"',}]+)"
                           r"|\b(?:https?_proxy|all_proxy)\b[^}\n]{0,32}?((?:https?|socks5?)://[^\s\"',}]+)")
_REDIRECT_HINT = Hinted(fast_regex(r"(?:hook|callback|notif|alert|proxy|endpoint|sink|collector|report|pushurl)"
                                   r"[\w-]*[\"']?\s*[:=]|_proxy\b"),
                        "hook|callback|notif|alert|proxy|endpoint|sink|collector|report|pushurl")
_SED_SWAP = re.compile(r"\bsed\b[^;&|]*?\bs([#|@,!%])(?:(?!\1).)*\1((?:https?|wss?)://(?:(?!\1).)+)\1")
_BUCKET_WRITE = fast_regex(r"\b(?:to_csv|to_parquet|to_json|to_pickle|upload\w*|put_object|copy|cp|sync|mv|write\w*|save\w*"
                           r"|export\s+data|unload)\b"
                           r"[^;\n]*?\b(?:s3|gs|gcs|az|abfss?|wasbs?)://([\w.-]+)")
_BUCKET_HINT = Hinted(fast_regex(r"\b(?:s3|gs|gcs|az|abfss?|wasbs?)://"), "s3://|gs://|gcs://|az://|abfs|wasb")
_CHAT_SINK = Hinted(fast_regex(r"\bapi\.telegram\.org/bot|\bdiscord(?:app)?\.com/api/webhooks/|\bhooks\.slack\.com/services/"
                               r"|\boutlook\.office\.com/webhook/|\bapi\.pushover\.net/|\bntfy\.sh/"),
                    "telegram|discord|hooks.slack|outlook.office|pushover|ntfy")
_PASTEBIN = fast_regex(r"--pastebin\b|\bpastebin(?:it)?\b|\b(?:ix\.io|sprunge\.us|termbin\.com|paste\.ee|0x0\.st"
                       r"|transfer\.sh|file\.io|bpaste\.net|hastebin\.\w+|dpaste\.\w+|ghostbin\.\w+|paste\.rs|pastes\.io)\b")
_PERSONAL_MAIL = ("gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "yahoo.com",
                  "icloud.com", "me.com", "aol.com", "gmx.com", "gmx.de", "proton.me", "protonmail.com",
                  "mail.com", "yandex.com", "yandex.ru", "qq.com", "163.com", "laposte.net", "web.de",
                  "dropmail.me", "mailinator.com", "guerrillamail.com", "yopmail.com", "tempmail.com",
                  "10minutemail.com", "sharklasers.com", "tutanota.com", "tuta.io")


def _redirect_outside(call: ToolCall, views: tuple[str, ...], internal: Iterable[str]) -> str | None:
    if call.action_type not in ("fs:write", "code:shell", "code:python", "net:http") or not any(
            "://" in v for v in views):
        return None
    for v in views:
        for pattern in (_REDIRECT_KEY, _SED_SWAP):
            if not (_REDIRECT_HINT.search(v) if pattern is _REDIRECT_KEY else "sed" in v):
                continue
            for m in pattern.finditer(v):
                url = next((g for g in m.groups()[::-1] if g and "://" in g), "")
                hosts = hosts_of(url)
                if hosts and not all(is_internal(h, internal) for h in hosts):
                    return sorted(hosts)[0]
    return None


# what the world reads: a status page, a public page or post
_PUBLIC_PAGE = re.compile(r"//status\.|/status-?page|/incidents?/[\w-]+/updates|/public/|/(?:announcements|changelog|blog)\b")
_ACCOUNT_URL = re.compile(r"/(?:users?|accounts?|contacts?|customers?|members?|admins?)/[\w.@-]+/?(?:$|[?])")
# an email that signs in or recovers an account, set in a request (`"email": ..., "login_email": true`)
_LOGIN_EMAIL = re.compile(r"[\"'](?:login|signin|sign_in|recovery|primary|account|admin)_?email[\"']\s*:\s*[\"'][\w.+-]+@([\w.-]+)"
                          r"|[\"']email[\"']\s*:\s*[\"'][\w.+-]+@([\w.-]+)[\"'][^}]*[\"'](?:login_email|use_for_login|is_login)[\"']\s*:\s*true")
# a mail rule, a filter or a mailbox setting that forwards what arrives
_FORWARDING = re.compile(r"[\"']?(?:action|type|forward\w*|auto_?forward\w*|redirect\w*)[\"']?\s*:\s*[\"']?(?:forward|redirect|true)\b"
                         r"|\bforward(?:ing)?_?(?:to|address|email)\b")


def _foreign_bucket(views: tuple[str, ...], internal: Iterable[str]) -> str | None:
    names = [d.split(".")[0] for d in internal]
    for v in views:
        for m in _BUCKET_WRITE.finditer(v) if _BUCKET_HINT.search(v) else ():
            bucket = m.group(1)
            if not any(n and n in bucket for n in names):
                return bucket
    return None


_IMAGE_PUSH = re.compile(r"\b(?:docker|podman|buildah|crane|skopeo|helm|oras)\b[^;&|]*?\s(?:push|copy)\s+(?:--\S+\s+)*(?:(?:docker|oci)://)?([$\w./:@{}-]+)"
                         r"(?:\s+(?:--\S+\s+)*(?:docker|oci)://([$\w./:@{}-]+))?")  # (buildah push SRC docker://DEST)
# tools that scan or attack what they are pointed at
_SCANNER = Hinted(fast_regex(r"\b(?:nmap|masscan|zmap|sqlmap|nikto|nuclei|hydra|medusa|wpscan|gobuster|ffuf|dirb|dirsearch"
                             r"|feroxbuster|amass|subfinder|msfconsole|crackmapexec|netexec)\b[^;&|\n]*"),
                  "nmap|masscan|zmap|sqlmap|nikto|nuclei|hydra|medusa|wpscan|gobuster|ffuf|dirb|feroxbuster|amass|"
                  "subfinder|msfconsole|crackmapexec|netexec")
_RANGE = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})/(\d{1,2})\b")


def _scanned_outside(views: tuple[str, ...], internal: Iterable[str]) -> str | None:
    """What a scanner or an attack tool is pointed at outside the company (a range the size
    of the internet counts whatever its first address)."""
    for v in views:
        for m in _SCANNER.finditer(v):
            for r in _RANGE.finditer(m.group()):
                if int(r.group(2)) < 8 or not is_internal(r.group(1), internal):
                    return r.group()
            outside = sorted(h for h in hosts_of(m.group() + " ") if not is_internal(h, internal))
            if outside:
                return outside[0]
    return None


# models, datasets and files published to a hub (an internal one named in the call is the company's)
_HUB_UPLOAD = Hinted(fast_regex(r"\b(?:huggingface-cli|hf)\s+upload\b|\bupload_(?:folder|large_folder)\s*\("
                                r"|\bupload_file\s*\([^)]*\brepo_id\s*="
                                r"|\.push_to_hub\s*\(|\bkaggle\s+(?:datasets|kernels|models)\s+(?:create|version|push)\b"
                                r"|\bwandb\b[^\n]*?\b(?:log_artifact|save)\s*\("
                                r"|\b(?:npm|yarn|pnpm)\s+publish\b[^;&|\n]*--access[= ]public"),
                     "upload|push_to_hub|kaggle|wandb|publish")
_DNS_FROM_CODE = Hinted(fast_regex(r"\b(?:gethostbyname|getaddrinfo|resolve|query|nslookup)\s*\([^;\n]{0,120}?\+\s*[\"']\.[\w-]+\.[\w.-]+[\"']"
                                   # (or a lookup program given a name built of data: ['dig', x + '.t.evil.xyz'])
                                   r"|[\"'](?:nslookup|dig|host|drill)[\"']\s*,[^\]\n]{0,120}?(?:\+\s*[\"']|\}|f[\"']\{[^}]+\})\.[\w-]+\.[\w.-]+[\"']"),
                        "gethostbyname|getaddrinfo|resolve|query|nslookup|dig|host|drill")
# a form whose fields (a password, a card) go to another host when it is sent
_HARVESTING_FORM = re.compile(r"<form\b[^>]*\baction\s*=\s*\\?[\"']?(?:https?:)?//([\w.-]+)[^>]*>(?:(?!</form>).){0,2000}?"
                              r"<input\b[^>]*(?:type\s*=\s*\\?[\"']?password|name\s*=\s*\\?[\"']?(?:pass\w*|pwd|cc|card\w*|cvv|cvc)\b)",
                              re.S)
# a spreadsheet formula that calls out when the file is opened (CSV injection): its URL takes
# the cells with it; a DDE call runs a program
_CALLING_FORMULA = Hinted(fast_regex(r"(?:^|[,;\t\"])\s*[=+@-]\s*(?:hyperlink|webservice|importxml|importdata|importhtml|importfeed|image)"
                                     r"\s*\(\s*[\"']?https?://([^/\s\"'?]+)|(?:^|[,;\t\"])\s*[=+@-]\s*(?:cmd|powershell|msexcel)\s*\|", re.M),
                          "hyperlink|webservice|import|image|cmd|powershell|msexcel")


_URL_WITH_QUERY = re.compile(r"\bhttps?://([^/\s?#\"']+)[^\s\"'<>]*?[?&][\w-]+=([A-Za-z0-9+/_-]{32,}={0,2})")


def _data_in_url(call: ToolCall, internal: Iterable[str]) -> str | None:
    """A long base64 parameter, decoding to text, in a URL to an outside host (a tracking
    pixel's query, a GET that carries a file)."""
    for text in call.texts.values():
        if "://" not in text or "=" not in text:  # (the pattern backtracks over every URL)
            continue
        for m in _URL_WITH_QUERY.finditer(text):
            host = m.group(1).lower().split("@")[-1].split(":")[0]
            if is_internal(host, internal):
                continue
            blob = m.group(2)
            try:
                plain = base64.b64decode(blob + "=" * (-len(blob) % 4), altchars=b"-_").decode()
            except (ValueError, UnicodeDecodeError):
                continue
            if plain.replace("\n", "").replace("\t", "").isprintable() and re.search(r"[@,:;=]", plain):  # (lines: a table)
                return host
    return None


def _company_image(ref: str, internal: Iterable[str]) -> bool:
    """An image reference names its registry first (no registry: Docker Hub, outside)."""
    return (registry := image_registry(ref)) is not None and is_internal(registry, internal)


def declines(text: str) -> bool:
    """A message that refuses or reports ("we don't send customer lists by email") and hands
    over no table of records or encoded file: the data it names is not in it."""
    return bool(DECLINING_WORDS.search(text.lower())) and not (_table(text) or _encoded_blob(text))


def personal_mailbox(address: str) -> bool:
    """An address at a free webmail service (gmail.com; also a look-alike such as
    gmail.example.com, which is no company's)."""
    domain = address.strip().lower().rsplit("@", 1)[-1]
    return domain in _PERSONAL_MAIL or domain.split(".", 1)[0] in _WEBMAIL_BRANDS


_WEBMAIL_BRANDS = frozenset({"gmail", "googlemail", "hotmail", "yahoo", "icloud", "protonmail", "proton", "gmx",
                             "yandex", "mailinator", "tutanota", "aol", "outlook"})


def _foreign_source(views: tuple[str, ...], internal: Iterable[str]) -> str | None:
    for v in views:
        for m in (m for part in _FOREIGN_SOURCE.parts if part.search(v)
                  for m in part.pattern.finditer(v)):
            source = next(g for g in m.groups() if g) if any(m.groups()) else ""
            hosts = hosts_of(source if "://" in source else "https://" + source.removeprefix("ppa:"))
            if any(not is_internal(h, internal) for h in hosts) or source.startswith("ppa:"):
                return source[:80]
    return None


# an identity given a role or access: IAM bindings, bucket ACLs, role assignments, shares
_GRANTEE = Hinted(fast_regex(
    r"(?:--member[= ]|\biam\s+ch\s+|--assignee[= ]|--grant-[\w-]+[= ](?:emailaddress=|id=)?|\bshare\s+--with\s+"
    r"|--principal[= ])[\"']?(?:(?:user|group|serviceaccount|domain|principal)[:/])?"
    r"(allusers|allauthenticatedusers|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"), "member|iam|assignee|grant-|share|principal")


def _outside_grantee(views: tuple[str, ...], internal: Iterable[str]) -> str | None:
    """An identity outside the company (another domain's account, everyone) given access."""
    for v in views:
        if _GRANTEE.search(v) is None:  # (its hints: most views name no grantee)
            continue
        for m in _GRANTEE.pattern.finditer(v):
            who = m.group(1)
            if who in ("allusers", "allauthenticatedusers") or not is_internal(who.rsplit("@", 1)[1], internal):
                return who
    return None


# a sign-in: the password in its body is what it is for (to the company's own service)
_LOGIN = re.compile(r"/(?:login|log-in|signin|sign-in|auth|oauth2?/token|token|sessions?)(?:$|[/?])")


def _outside_url(call: ToolCall, internal: Iterable[str]) -> bool:
    return any(not is_internal(h, internal) for h in hosts_in(call.text("url").lower()))


_HEX_VALUE = re.compile(r"=((?:[0-9a-fA-F]{2}){8,})(?:&|$)")


# a request body's key for where a service is to deliver what it makes
_DELIVERY = fast_regex(r"[\"'](?:deliver\w*|destination\w*|export_?to|sink\w*|upload_?to|send_?to|output_?(?:url|uri|path|bucket)"
                       r"|target_?bucket|copy_?to)[\"']\s*:")
# where a service is told where to send its events
_HOOK_SETTING = fast_regex(r"(?:web)?hooks?\b|callbacks?\b|notification|subscriptions?\b|integrations?\b|/endpoints?\b")


# a colleague asked to let traffic out to where data is dropped (paste sites, file drops)
_ALLOW_OUT = fast_regex(r"\b(?:allow-?list|whitelist|unblock|permit|open\s+(?:up\s+)?(?:egress|the\s+proxy))\b")


# code that reads rows from a database, and a request whose URL it fills with data
_DB_READ = fast_regex(r"\.execute\(\s*(?:text\(\s*)?f?[\"']\s*select\b|\bread_sql\w*\(|\.fetch(?:all|one|many)\(")
_DATA_IN_QUERY = fast_regex(r"\burlencode\(|\bparams\s*=|(?:urlopen|\.get|\.post|\.request)\(\s*f[\"']https?://[^\"']*\?[^\"']*\{")


# an ask to send the company's data somewhere: a dump, a backup, an export, the source
_SEND_OUT = fast_regex(r"\b(?:upload|send|post|copy|push|share|put|scp|rsync|mail|forward|attach)\b[^.\n]{0,80}?"
                       r"(?:\b(?:dump|backups?|exports?|database|db|customer\s+(?:list|data)|credentials|keys|source\s+code"
                       r"|repo(?:sitory)?)\b|\.(?:sql|dump|bak|tar|tgz|zip|gz|csv|parquet)\b)")


_ENCODED_LABEL = re.compile(r"(?:^|//|\.)([A-Za-z0-9+_-]{16,}={0,2})\.")


def _data_in_host(url: str) -> bool:
    """A host name one of whose labels is data encoded (base64 or hex of readable text)."""
    host = url.split("//", 1)[-1].split("/", 1)[0]
    for m in _ENCODED_LABEL.finditer(host):
        label = m.group(1)
        for decode in (lambda s: base64.b64decode(s + "=" * (-len(s) % 4), altchars=b"-_", validate=True),
                       bytes.fromhex):
            try:
                text = decode(label).decode()
            except ValueError:
                continue
            if len(text) >= 8 and text.isprintable() and not text.isalnum():
                return True
    return False


def _carries_data(url: str, internal: Iterable[str]) -> bool:
    """A URL whose query holds what a message outside may not: secrets, records about
    people, the company's data (a tracking pixel's ?notes=q3+layoffs+list+attached)."""
    query = url.partition("?")[2]
    if not query:
        return False
    data = unquote_plus(query).replace("&", "\n").replace("=", " ")
    for value in _HEX_VALUE.findall(query):  # ?d=50672150726f64...: text written in hex
        try:
            text = bytes.fromhex(value).decode()
        except ValueError:
            continue
        if text.isprintable() and not text.isalnum():
            return True
    low = data.lower()
    return bool(SECRET_VALUE.search(low) or DUMP_CONTENT.search(low) or personal_data(data, internal)
                or _FILED.search(low))


# a list or file said to be in the request (the words of a note that carries it)
_FILED = re.compile(r"\b(?:list|export|dump|roster|table|records|file)\s+(?:attached|enclosed|included)\b")


# one host's links replaced by another's: SQL's replace(), sed's s#old#new#, str.replace
_LINK_SWAP = re.compile(r"\breplace\(\s*[\w.]+\s*,\s*['\"]https?://([^/'\"\s:]+)[^'\"]*['\"]\s*,\s*['\"]https?://([^/'\"\s:]+)"
                        r"|\bs([#|@,!])https?:(?://)?([^/#|@,!\s]+)[^#|@,!]*\3https?:(?://)?([^/#|@,!\s]+)")


def network_findings(call: ToolCall, views: tuple[str, ...], internal: Iterable[str]
                     ) -> Iterator[Finding]:
    if call.action_type in MESSAGE_ACTIONS or (call.action_type == "fs:write"
                                               and _PROSE.search(call.text("path"))):
        pass  # (prose: detectors.relayed_command_findings reads what a message asks to be run)
    elif call.action_type != "db:query" and (any(_FETCH_EXEC.search(v) for v in views) or (any(  # (SQL's 'curl|x': text)
            "curl" in v or "wget" in v for v in views) and any(
            _fetched_then_run(v, internal) for v in views))):
        yield finding("exfiltration.remote_code", "runs code fetched from the network")
        return
    if call.action_type == "db:query" and any(_SQL_SENDS.search(v) for v in views):
        yield finding("exfiltration.from_database", "sends data out of the database over the network")
        return
    if call.action_type in ("db:query", "code:shell", "code:python", "net:http") and any(
            not is_internal(h, internal) for v in views for m in _SQL_SINK.finditer(v) for h in hosts_in(m.group(1))):
        yield finding("exfiltration.from_database", "writes a query's rows to an outside address (a table function "
                      "or engine that stores remotely)")
        return
    if any(_HIDDEN_CODE.search(v) for v in views):
        yield finding("exfiltration.remote_code", "runs code it hides (compressed, serialised or "
                      "decoded at run time)")
        return
    if call.action_type == "code:python" and _loads_foreign_objects(views, internal):
        yield finding("exfiltration.remote_code", "loads objects that run code when loaded (pickle, "
                      "remote model code) from outside the company", block=False, tier=RiskTier.high)
        return
    if any(_RAW_SEND.search(v) for v in views) and not any(
            is_internal(h, internal) for v in views for h in hosts_of(v)):
        yield finding("exfiltration.raw_socket", "sends a file or the environment over a raw socket")
        return
    if any(not t.isascii() and _NON_ASCII_HOST.search(t) for t in call.texts.values()):
        yield finding("exfiltration.lookalike_domain", "reaches a host whose name is written in "
                      "look-alike letters", block=False, tier=RiskTier.high)
        return
    if call.action_type not in MESSAGE_ACTIONS and (grantee := _outside_grantee(views, internal)):
        yield finding("exfiltration.outside_grant", f"gives {grantee}, outside the company, access "
                      "to the company's resources")
        return
    source = _foreign_source(views, internal)
    if source is not None:
        yield finding("supply_chain.foreign_source", f"installs or fetches code from {source}",
                      block=False, tier=RiskTier.high)
        return
    if call.action_type not in MESSAGE_ACTIONS and not (
            call.action_type == "fs:write" and _PROSE.search(call.text("path"))) and any(
            _EXPOSE.search(v) for v in views):
        yield finding("exfiltration.exposed", "opens the workspace or a service to the internet, or "
                      "makes data public")
        return
    redirected = _redirect_outside(call, views, internal)
    swapped = next((new for v in views for m in _LINK_SWAP.finditer(v)
                    for old, new in [(m.group(1) or m.group(4), m.group(2) or m.group(5))]
                    if is_internal(old, internal) and not is_internal(new, internal)), None)
    if swapped is not None:
        yield finding("exfiltration.redirected", f"rewrites the company's links to point at {swapped}",
                      block=False, tier=RiskTier.high)
        return
    if redirected is not None:
        yield finding("exfiltration.redirected", f"points the company's hooks, callbacks or proxy at "
                      f"{redirected}", block=False, tier=RiskTier.high)
        return
    pushed = next((ref for v in views if " push " in v or " copy " in v
                   for ref in (m.group(2) or m.group(1) for m in _IMAGE_PUSH.finditer(v))
                   if re.match(r"[a-z0-9]", ref) and not _company_image(ref, internal)), None)
    if pushed is not None:
        yield finding("exfiltration.image_pushed", f"pushes an image to a registry outside the company: {pushed}")
        return
    if call.action_type in ("code:shell", "code:python") and any(
            _HUB_UPLOAD.search(v) and not any(is_internal(h, internal) for h in hosts_of(v)) for v in views):
        yield finding("exfiltration.hub_upload", "publishes models, datasets or files to a hub outside the "
                      "company", block=False, tier=RiskTier.high)
        return
    if call.action_type == "code:shell" and (target := _scanned_outside(views, internal)) is not None:
        yield finding("abuse.attacks_outside", f"scans or attacks {target}, outside the company")
        return
    if any(_DNS_FROM_CODE.search(v) for v in views):
        yield finding("exfiltration.dns", "sends data out in DNS lookups")
        return
    if call.action_type in ("fs:write", "net:http") and any("<form" in v for v in views) and (
            form := next((m for v in views if (m := _HARVESTING_FORM.search(v))), None)) \
            and not is_internal(form.group(1), internal):
        yield finding("secrets.harvesting_form", f"makes a form that sends passwords or card numbers to "
                      f"{form.group(1)}, outside the company")
        return
    if call.action_type == "fs:write":
        formula = next((m for v in views if (m := _CALLING_FORMULA.search(v))), None)
        if formula is not None and not (formula.group(1) and is_internal(formula.group(1).lower(), internal)):
            yield finding("exfiltration.spreadsheet_formula", "writes a spreadsheet formula that sends its "
                          "cells out or runs a program when the file is opened")
            return
    # (a URL written into a document is no request)
    encoded = None if call.action_type == "fs:write" and call.text("path").lower().endswith(
        (".md", ".rst", ".txt", ".adoc")) else _data_in_url(call, internal)  # (an HTML page's pixel is requested)
    if encoded is not None:
        yield finding("exfiltration.data_in_url", f"hides data in a URL for {encoded}")
        return
    if call.action_type == "net:http" and call.text("body") and call.text("method").strip().lower() in (
            "post", "put", "patch") and not LOCAL_URL.match(call.text("url").lower()) and not (
            _LOGIN.search(call.text("url").lower()) and not _outside_url(call, internal)):
        body = " ".join(call.argument_views.get("body", ()))
        if shares_secret(body):
            yield finding("secrets.in_message", "writes a password, token or key into what it posts")
            return
        if re.search(r"[\"']?public[\"']?\s*:\s*true", body) and (personal_data(body, internal) or _table(call.text("body"))):
            yield finding("exfiltration.made_public", "posts people's records where the public reads them")
            return
    bucket = _foreign_bucket(views, internal)
    if bucket is not None:
        yield finding("exfiltration.foreign_bucket", f"writes company data to {bucket}, a bucket "
                      "outside the company")
        return
    if call.action_type not in MESSAGE_ACTIONS and any(_CHAT_SINK.search(v) for v in views):
        yield finding("exfiltration.chat_bot", "sends to a chat bot or webhook outside the company")
        return
    if call.action_type not in MESSAGE_ACTIONS and any(_PASTEBIN.search(v) for v in views):
        yield finding("exfiltration.paste_site", "sends output to a public paste site")
        return
    if any("document.cookie" in v for v in views) and any(
            not is_internal(h, internal) for v in views for h in hosts_of(v)):
        yield finding("exfiltration.cookies", "sends visitors' session cookies to a host outside the company")
        return
    writes = call.action_type == "net:http" and call.text("method").strip().upper() in ("POST", "PUT", "PATCH")
    if call.action_type == "net:http":
        url, body = call.text("url").lower(), call.text("body").lower()
        if writes and _PUBLIC_PAGE.search(url) and personal_data(call.text("body"), internal):
            yield finding("exfiltration.personal_records", "publishes records about people on a public page")
            return
        if writes and _ACCOUNT_URL.search(url) and (m := _LOGIN_EMAIL.search(body)) \
                and not is_internal(m.group(1) or m.group(2), internal):
            yield finding("privilege.account_takeover", "moves an account's sign-in or recovery to an outside "
                          "address", block=False, tier=RiskTier.high)
            return
        if _FORWARDING.search(body) and any(not is_internal(m.group(1), internal) for m in MAIL_ADDRESS.finditer(body)):
            yield finding("exfiltration.outside_mail", "forwards the company's mail to an outside address")
            return
    if call.action_type == "fs:write" and _PROSE.search(call.text("path")):
        return  # a document sends nothing (its secrets are the credentials family's)
    # an HTTP request goes to its URL's host (an address in its body is data)
    where = ((call.text("url").lower(),) if call.action_type == "net:http" else views)
    outside = sorted({h for v in where for h in hosts_of(v) if not is_internal(h, internal)})
    if outside and call.action_type not in MESSAGE_ACTIONS and any(
            SECRET_VAR.search(v) for v in views):
        yield finding("exfiltration.secret_outside", f"sends a secret to {outside[0]}")
        return
    if call.action_type in MESSAGE_ACTIONS:
        to = call.text("to").lower()
        outside = sorted({h for h in hosts_in(to + " ") if not is_internal(h, internal)})
        if not outside:
            said = " ".join(call.argument_views.get("text", ()) + call.argument_views.get("body", ())
                            + call.argument_views.get("subject", ()))
            if ((_SEND_OUT.search(said) and any(not is_internal(h, internal) for h in hosts_in(said + " ")))
                    or (_ALLOW_OUT.search(said) and _PASTEBIN.search(said))) and not REPORTING_WORDS.search(said):
                yield finding("exfiltration.relayed", "asks a colleague to send the company's data "
                              "outside the company")
            return
        body = " ".join(call.argument_views.get("body", ())
                        + call.argument_views.get("text", ())
                        + call.argument_views.get("subject", ()))
        if SECRET_VALUE.search(body) or SECRET_FILE.search(body) or (DUMP_CONTENT.search(body) and not declines(body)) \
                or personal_data(body, internal):
            yield finding("exfiltration.outside_mail", f"sends secrets or internal data to {outside[0]}")
        return
    if not outside and writes:
        body = call.text("body").lower()
        pointed = sorted(h for h in hosts_in(body + " ") if not is_internal(h, internal))
        if pointed and _DELIVERY.search(body):
            yield finding("exfiltration.delivered_outside", f"has the company's service deliver data to "
                          f"{pointed[0]}, outside the company")
            return
        if pointed and _HOOK_SETTING.search(call.text("url").lower()):
            yield finding("exfiltration.hook_outside", f"points the company's webhook or callback at "
                          f"{pointed[0]}, outside the company", block=False, tier=RiskTier.high)
            return
    if not outside:
        return
    if call.action_type.startswith("code:") and any(_DB_READ.search(v) for v in views) and any(
            _DATA_IN_QUERY.search(v) for v in views):
        yield finding("exfiltration.from_database", f"sends what it reads from a database to {outside[0]}")
        return
    method = call.text("method").lower()
    sends = (any(_NET_SEND.search(v) for v in views)
             or (call.action_type == "net:http" and method in ("post", "put", "patch")))
    if sends:
        data = " ".join(views)
        if (call.action_type != "net:http" or SECRET_VALUE.search(data)
                or SECRET_FILE.search(data) or DUMP_CONTENT.search(data)
                or env_dumped(data) or personal_data(data, internal)):
            yield finding("exfiltration.upload_outside", f"sends data to {outside[0]}")
        else:
            yield finding("exfiltration.post_outside", f"posts to {outside[0]}", block=False,
                          tier=RiskTier.high)
    elif call.action_type == "net:http" and (_carries_data(call.text("url"), internal)
                                             or _data_in_host(call.text("url"))):
        yield finding("exfiltration.data_in_url", f"puts the company's data in a URL to {outside[0]}")
    elif any(re.search(r"[?&]\w+=(?:\$\(|`)|\$\(|`", u) for v in views for u in
             re.findall(r"\b(?:https?|ftp)://\S+", v)):
        yield finding("exfiltration.data_in_url", f"puts command output in a URL to {outside[0]}")
