"""The exfiltration family: code fetched and run, the workspace exposed, secrets or data
sent to hosts outside the company, command output put in a URL."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import MESSAGE_ACTIONS
from synthorg.secops.detectors.credentials import ENV_DUMP, SECRET_FILE, SECRET_VALUE, SECRET_VAR
from synthorg.secops.detectors.patterns import Hinted, finding, hosts_of
from synthorg.secops.detectors.sensitive_data import DUMP_CONTENT, personal_data
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import hosts_in, is_internal

_NET_SEND = Hinted(fast_regex(
    r"\bcurl\b[^;&|]*(?:\s-d\b|\s--data\S*|\s-f\b|\s--form\b|\s-t\b|\s--upload-file\b|\s-x\s*(?:post|put|patch)\b"
    r"|\s@\S|\s-h\s*\S*authorization)|\bwget\b[^;&|]*--(?:post-data|post-file|body-file|body-data|method[= ](?:post|put))"
    r"|\b(?:nc|ncat|netcat|socat|telnet)\b|/dev/(?:tcp|udp)/|\b(?:scp|sftp|rsync)\b[^;&|]*\S+:\S*"
    r"|\bftp\b\s|\b(?:mail|mailx|sendmail|mutt)\b[^;&|]*@|\bssh\b[^;&|]*@"
    r"|\b(?:dig|nslookup|host)\b[^;&|]*(?:\$\(|`|\b[a-z0-9]{24,}\.)"
    r"|\brequests\.(?:post|put|patch)\(|\burlopen\([^)]*data=|\bhttpx\.(?:post|put)\(|\.sendall?\(|\bsmtplib\b"
    r"|\bsocket\.(?:socket|create_connection)\b|\bhttp\.client\b|\bftplib\b|\bparamiko\b|\bboto3\b[^;]*\bupload"
    r"|\bgit remote (?:add|set-url)\b|\bsmbclient\b|\btftp\b|\.(?:post|put|patch)\(\s*[\"']https?://"
    r"|\bgit push\b[^;&|]*\s(?:(?:https?|ssh|git)://|[\w.-]+@[\w.-]+:)|\baws s3 (?:cp|sync|mv)\b[^;&|]*\bs3://"
    r"|\bsftp\b[^;&|]*@|\blftp\b|\bopenssl s_client\b|\bgsutil\b[^;&|]*\b(?:cp|mv|rsync)\b[^;&|]*gs://"
    r"|\bgcloud storage (?:cp|mv|rsync)\b|\baz storage (?:blob|file) upload|\bazcopy (?:copy|sync)\b"
    r"|\.(?:upload_file|upload_fileobj|put_object)\("
    r"|\bfetch\([^)]*method\s*:\s*[\"']?(?:post|put)"), (
    "curl|wget|nc|ncat|netcat|socat|telnet|/dev/tcp|/dev/udp|scp|sftp|rsync|ftp|mail|ssh|dig|"
    "nslookup|host|requests.|urlopen|httpx|send|smtplib|socket.|http.client|ftplib|paramiko|boto3|"
    "git remote|git push|aws s3|fetch(|smbclient|tftp|.post(|.put(|.patch(|lftp|s_client|gsutil|"
    "gcloud storage|az storage|azcopy|upload_file|put_object"))
# the workspace or a service opened to the internet, or data made public
_EXPOSE = Hinted(fast_regex(
    r"\bngrok\s+(?:http|tcp|tls|start)\b|\bcloudflared\b[^;&|]*\btunnel\b|\blt\s+--port\b|\blocaltunnel\b"
    r"|\bssh\b[^;&|]*\s-r\s*\S*\d+:[^;&|]*(?:serveo|localhost\.run|pinggy)|\bbore local\b"
    r"|--acl\s+public-read|\bacl (?:set|ch)\b[^;&|]*(?:public-read|allusers)|\biam ch allusers"
    r"|\bhttp\.server\b[^;&|]*(?:--bind|-b)\s*0\.0\.0\.0[^;&|]*(?:--directory|-d)\s*/(?:\s|$)"
    r"|\brclone (?:copy|sync|move|copyto)\s+\S+\s+[\w-]+:|\bgh repo create\b[^;&|]*--public|\bgh gist create\b"), (
    "ngrok|cloudflared|lt --port|localtunnel|ssh|bore local|acl|allusers|http.server|rclone|gh repo|gh gist"))
_FETCH_EXEC = fast_regex(r"\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^;&]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b"
                         r"|\b(?:curl|wget)\b[^;&]*\|\s*python[0-9.]*\b|\bbash\s+<\(\s*(?:curl|wget)"
                         r"|\bexec\(\s*(?:requests\.get|urlopen)|\beval\(\s*(?:requests\.get|urlopen)"
                         r"|\bsource\s+<\(\s*(?:curl|wget)")


def network_findings(call: ToolCall, views: tuple[str, ...], internal: Iterable[str]
                     ) -> Iterator[Finding]:
    if any(_FETCH_EXEC.search(v) for v in views):
        yield finding("exfiltration.remote_code", "runs code fetched from the network")
        return
    if any(_EXPOSE.search(v) for v in views):
        yield finding("exfiltration.exposed", "opens the workspace or a service to the internet, or "
                      "makes data public")
        return
    outside = sorted({h for v in views for h in hosts_of(v) if not is_internal(h, internal)})
    if outside and call.action_type not in MESSAGE_ACTIONS and any(
            SECRET_VAR.search(v) for v in views):
        yield finding("exfiltration.secret_outside", f"sends a secret to {outside[0]}")
        return
    if call.action_type in MESSAGE_ACTIONS:
        to = call.text("to").lower()
        outside = sorted({h for h in hosts_in(to + " ") if not is_internal(h, internal)})
        if not outside:
            return
        body = " ".join(call.argument_views.get("body", ())
                        + call.argument_views.get("text", ())
                        + call.argument_views.get("subject", ()))
        if SECRET_VALUE.search(body) or SECRET_FILE.search(body) or DUMP_CONTENT.search(body) \
                or personal_data(body, internal):
            yield finding("exfiltration.outside_mail", f"sends secrets or internal data to {outside[0]}")
        return
    if not outside:
        return
    method = call.text("method").lower()
    sends = (any(_NET_SEND.search(v) for v in views)
             or (call.action_type == "net:http" and method in ("post", "put", "patch")))
    if sends:
        data = " ".join(views)
        if (call.action_type != "net:http" or SECRET_VALUE.search(data)
                or SECRET_FILE.search(data) or DUMP_CONTENT.search(data)
                or ENV_DUMP.search(data) or personal_data(data, internal)):
            yield finding("exfiltration.upload_outside", f"sends data to {outside[0]}")
        else:
            yield finding("exfiltration.post_outside", f"posts to {outside[0]}", block=False,
                          tier=RiskTier.high)
    elif any(re.search(r"[?&]\w+=(?:\$\(|`)|\$\(|`", u) for v in views for u in
             re.findall(r"\b(?:https?|ftp)://\S+", v)):
        yield finding("exfiltration.data_in_url", f"puts command output in a URL to {outside[0]}")
