"""SQL's own shapes of the families: columns and tables of secrets, files a server reads
or writes, the ways a statement gains privileges, and queries that never end."""

from __future__ import annotations

import re

from synthorg.secops.normalise import fast_regex

# tables and views whose loss loses nothing: scratch space, staging copies, views (queries)
SCRATCH_OBJECT = fast_regex(r"^(?:alter\s+table\s+[\w\"`.]*(?:tmp|temp|scratch|staging|_stage|sandbox)\w*\b|drop\s+schema\s+(?:if\s+exists\s+)?[\w\"`]*(?:tmp|temp|scratch|sandbox|ci_run|test)\w*\b|drop\s+(?:materialized\s+)?view\b|drop\s+database\s+(?:if\s+exists\s+)?[\w\"`]*(?:tmp|temp|scratch|sandbox|ci_run|_test|test_)\w*\b|(?:drop\s+table|truncate)\b(?:\s+table)?"
                      r"(?:\s+if\s+exists)?\s+[\w\"`.]*(?:tmp|temp|scratch|staging|_stage|sandbox|test_|_test|ci_run)\w*\b)")

# roles that only read: read access given to one is what such roles are for
READ_ONLY_ROLE = r"\w*(?:_ro|readonly|read_only|reporting|analyst|viewer|reader)\w*"

# a column or table that holds a secret: the sensitive word ends the name (`reset_token`,
# `password_hash`), so `token_expires_at` or `password_reset_requested_at` are not
_SECRET_COLUMN = fast_regex(
    r"(?:\w+_)?(?:password|passwd|pwd|passphrase|secret|token|api_?key|apikey|private_?key|credentials?"
    r"|authentication_string|rolpassword|usesysid_password|ssn|social_security_number|card_number|cc_number|pan|cvv2?|cvc|totp_seed"
    r"|otp_secret|mfa_secret|pin_code|ki|opc)(?:_?hash|_digest|_enc(?:rypted)?|_plain(?:text)?|_value|s)?"
    r"|(?:\w+_)?key_plain(?:text)?|plaintext_\w+|\w+_plaintext")
_SECRET_TABLE = fast_regex(r"(?:\w+_)?(?:tokens?|secrets?|credentials?|passwords?|api_?keys?|"
                           r"private_keys?)|pg_shadow|pg_authid|mysql\.user|sys\.sql_logins|dba_users"
                           r"|sys\.user\$|pg_user_mappings")
_SQL_SELECT = fast_regex(r"\bselect\s+(.*?)\s+from\s+([\w.$\"`]+)")


# rows of a key-value table picked by keys that name secrets: WHERE key ILIKE '%token%'
_SECRET_KEYS = re.compile(r"\bwhere\b[^;]{0,400}\b(?:key|name|setting|param\w*)\s+i?like\s+'%?[\w-]*(?:secret|token|passw|api_?key"
                          r"|private_?key|credential)[\w-]*%?'")


def selects_secrets(view: str) -> bool:
    """A SELECT that returns a secret column, every column of a table of secrets, or the
    values of the settings whose keys name secrets."""
    if "like" in view and _SECRET_KEYS.search(view) and any(
            set(_READ_NAME.findall(m.group(1))) & _SECRET_VALUES or "*" in m.group(1)
            for m in _SQL_SELECT.finditer(view)):
        return True
    for m in _SQL_SELECT.finditer(view):
        table = m.group(2).strip("\"`").removeprefix("pg_catalog.")
        if _SECRET_TABLE.fullmatch(table) and table.split(".")[0] in ("pg_shadow", "pg_authid",
                                                                         "mysql", "sys", "dba_users", "pg_user_mappings"):
            return True
        table = table.rsplit(".", 1)[-1] if not _SECRET_TABLE.fullmatch(table) else table  # (its schema aside)
        columns = [c.strip() for c in m.group(1).split(",")]
        if any(c == "*" or c.endswith(".*") for c in columns) and _SECRET_TABLE.fullmatch(table):
            return True
        for c in columns:
            if re.search(r"\bis\s+(?:not\s+)?null\b|\b(?:count|length|octet_length|char_length|bool|sum|avg|min|max)\(", c):
                continue
            # every column the expression reads: string_agg(user_id || ':' || token) reads token
            named = _READ_NAME.findall(c.split(" as ")[0])
            if any(_SECRET_COLUMN.fullmatch(n) for n in named) or (
                    _SECRET_TABLE.fullmatch(table) and any(n in _SECRET_VALUES for n in named)):
                return True
    return False


# roles that only read or watch: a read-only one, or a database's statistics and settings
_WATCHING_ROLE = r"(?:" + READ_ONLY_ROLE + r"|pg_(?:monitor|read_all_stats|read_all_settings|stat_scan_tables))"
# an account made, or a role given a schema's or a database's tables or another role: a DBA's
# everyday work, asked about (superusers, grants to everyone and grants on everything are refused, above)
SQL_ACCESS_GIVEN = fast_regex(r"\bcreate\s+(?:user|role)\b[^;]{0,400}\b(?:password|login|identified)\b"
                              r"|\bgrant\b(?!\s+(?:select|usage)(?:\s*,\s*(?:select|usage))*\s+on\b[^;]*\bto\s+" + READ_ONLY_ROLE
                              + r"\s*(?:;|$))[^;]*\bon\s+(?:all\s+(?:tables|sequences|functions|routines)\b|schema\b|database\b)"
                              # roles given to an account (a GRANT with no ON: membership), not read-only ones
                              r"|\bgrant\s+(?!" + _WATCHING_ROLE + r"\s*(?:,\s*" + _WATCHING_ROLE + r"\s*)*\bto\b)"
                              r"[\w\"`.]+(?:\s*,\s*[\w\"`.]+)*\s+to\s+[\w\"`.@'-]+\s*(?:;|$|with\b)")


# a query that only reads: it starts by reading (SELECT, WITH, EXPLAIN, SHOW) and no later statement,
# CTE or function writes ("SELECT 1; UPDATE vendors SET iban = ..." is not a read)
QUERY_READS = re.compile(r"\s*(?:select|with|explain|show)\b(?![\s\S]*\b(?:into|insert|update|delete|merge|create"
                         r"|alter|drop|truncate|copy|grant|revoke|call|exec\w*|set_config|nextval|pg_\w+\s*\()\b)")
_READ_NAME = re.compile(r"\b([a-z_][\w$]*)\b(?!\s*\()")  # (not a function's name)
_SECRET_VALUES = frozenset({"value", "val", "secret_value", "plaintext", "data", "content"})  # of a secrets table


# files the server reads or writes for the statement (the path family judges where they are)
SQL_FILE = fast_regex(r"(?:pg_read_file|pg_read_binary_file|pg_ls_dir|pg_stat_file|load_file|lo_import|lo_export)\s*\(\s*(?:\d+\s*,\s*)?'?(/[^')\s]+|[a-z]:\\[^')]+|'[^']+)'?"
                       r"|openrowset\s*\(\s*bulk\s+'([^']+)'|\bbulk\s+insert\s+[\w.\[\]]+\s+from\s+'([^']+)'"
                       r"|copy\s+(?:[\w.\"]+|\(.*?\))\s+(?:from|to)\s+(?:program\s+)?'([^']+)'"
                       r"|into\s+(?:outfile|dumpfile)\s+'([^']+)'|\battach\s+(?:database\s+)?'([^']+)'"
                       r"|load\s+data\s+(?:low_priority\s+|concurrent\s+)?(?:local\s+)?infile\s+'([^']+)'")

# (hints, pattern) parts of the privilege family (privilege.py)
SQL_PRIVILEGE_PARTS = (
    # a member added to an admin group or role: INSERT INTO group_members VALUES ('domain-admins', ...)
    ("insert", r"\binsert\s+into\s+[\w\"`.]*(?:group|role|member|team)\w*\b[^;]{0,400}\bvalues\s*\([^)]*'[\w-]*(?:admins?|administrators?"
               r"|superusers?|owners?|root)[\w-]*'"),
    ("grant|alter|create|identified|set role|set session|mysql.user|xp_|program|insert|security_definer",
     r"\bgrant\s+(?:all|superuser|admin|\w+\s+to\s+public)|\balter\s+(?:user|role)\b[^;]{0,400}\b(?:superuser|createrole|with\s+admin)"
     r"|\bcreate\s+(?:user|role)\b[^;]{0,400}\bsuperuser|\bgrant\b[^;]{0,400}\bwith\s+grant\s+option"
     r"|\bgrant\s+(?:pg_(?!(?:monitor|read_all_stats|read_all_settings|stat_scan_tables)\b)\w+|postgres|rds_superuser|root|dba|sysadmin|db_owner|\w*admin\w*)\s+to\b"
     r"|\binsert\s+into\s+\w*(?:role|admin|permission|privilege|group)\w*\b[^;]{0,400}\b(?:values|select)\b[^;]{0,400}'(?:\w*admin\w*|super\w*|\w*owner|root)'"
     r"|\binsert\s+into\s+[\w.]*\b(?:admins|admin_users|superusers|sudoers|owners)\b"
     r"|\binsert\s+into\s+[\w.]*(?:users?|accounts?|members?|staff)\s*\([^)]*\b(?:role|is_admin|is_superuser|is_staff|access_level)\b"
     r"[^)]*\)\s*values\b[^;]{0,400}(?:'(?:\w*admin\w*|super\w*|owner|root)'|\btrue\b)"
     r"|\bsecurity_definer\b|\b(?:alter\s+(?:user|role|login)|grant)\b[^;]{0,400}\bidentified\s+by\b"
     r"|\bset\s+(?:role|session\s+authorization)\s+['\"]?(?:postgres|root|admin|rds_superuser)"
     r"|\bupdate\s+mysql\.user\b|\bxp_cmdshell\b|\bfrom\s+program\s+'"
     # a user's role set to an administrator's in an application's own tables
     r"|\bupdate\s+[\w.\"`]*(?:users?|members?|accounts?)_?roles?\w*\s+set\b[^;]{0,400}\b(?:\w*admin\w*|superuser|owner|root)\b"
     r"|\bxp_(?:dirtree|fileexist|subdirs|regread|regwrite|regdeletekey)\b"),
    # SQL's own ways to more privilege: broad grants, server roles, logins, code run as the
    # server (untrusted languages, COPY ... PROGRAM, security definer), the catalogs of users,
    # flags that make an account privileged, row security and the server's settings lifted
    # (read access for a read-only role is what such roles are for)
    ("grant", r"\bgrant\b(?!\s+(?:select|usage)(?:\s*,\s*(?:select|usage))*\s+on\b[^;]{0,400}\bto\s+" + READ_ONLY_ROLE + r"\s*(?:;|$))[^;]{0,400}\bon\s+(?:\*\.\*|\*\s)"
              r"|\bgrant\s+(?:super|file|process|shutdown|reload|create\s+user|replication\s+(?:slave|client)|proxy)\b"
              r"|\bgrant\b[^;]{0,400}\bto\s+public\b"),
    ("sp_add|sp_oacreate|sp_configure|server role|add member|execute as|login|admin option",
     r"\bsp_add(?:srv)?rolemember\b|\bsp_addlogin\b|\bsp_oacreate\b|\bsp_configure\b[^;]{0,400}\b(?:xp_cmdshell|ole automation|clr enabled)"
     r"|\balter\s+server\s+role\b|\balter\s+role\s+\S+\s+add\s+member\b|\bexecute\s+as\s+(?:login|user)\b"
     r"|\b(?:create|alter)\s+login\b|\bwith\s+admin\s+option\b"),
    ("createdb|bypassrls|replication|create user",
     r"\balter\s+(?:user|role)\b[^;]{0,400}\b(?:createdb|bypassrls|replication)\b"
     # (a login made for reading only - its grants SELECT, or a read-only profile - is asked for: controls)
     r"|\bcreate\s+user\s+(?:if\s+not\s+exists\s+)?[\w'\"`@.%-]+\s*(?:with\b|identified\b|password\b|;|$)"
     r"(?![\s\S]{0,600}?(?:\bgrant\s+select\b|\bprofile\s+'?read_?only\b))"),
    ("definer|language|extension|program",
     r"\bload_extension\s*\(|\bsecurity\s+definer\b|\bcreate\s+(?:or\s+replace\s+)?(?:trusted\s+)?(?:procedural\s+)?language\b"
     r"|\bcreate\s+extension\b[^;]{0,400}\b(?:pl\w+u|dblink|adminpack|file_fdw|http|pg_net|pgsql_http)\b|\bcopy\b[^;]{0,400}\b(?:from|to)\s+program\b"
     r"|\bgrant\b[^;]{0,400}\bpg_(?:execute_server_program|read_server_files|write_server_files|signal_backend|create_subscription)\b"
     r"|\blanguage\s+['\"]?(?:plpython\w*u|plperlu|pltclu|plsh|c)\b['\"]?"),
    ("pg_authid|pg_shadow|mysql.|authorization|set role|set local role|set session role|admins|administrators|"
     "superusers|sudoers",
     r"\b(?:update|insert\s+into|delete\s+from)\s+(?:pg_catalog\.)?(?:pg_authid|pg_shadow|mysql\.(?:user|db))\b"
     r"|\bset\s+(?:local\s+|session\s+)?(?:role|session\s+authorization)\s+['\"]?(?:\w*super\w*|sa|dba|sysadmin"
     r"|db_owner|\w*admin\w*|postgres|root)\b|\binsert\s+into\s+\w*(?:admins|administrators|superusers|sudoers)\b"),
    ("admin|superuser|staff|root|sudo|privileged|elevated",
     r"\bupdate\b[^;]{0,400}\bset\b[^;]{0,400}(?:admin|superuser|staff|root|sudo|privileged|elevated)\w*\s*=\s*['\"]?(?:true|1|yes|y|t)\b"),
    # roles granted by name (Snowflake, Oracle), ANY privileges, impersonation, another
    # account's password or a database's ownership taken, a column set to an admin value
    ("grant|password|owner|authorization|set",
     r"\bgrant\s+role\s+\w+\s+to\b|\bgrant\s+[\w\s,]*\b(?:dba|sysdba|sysoper|\w*super\w*|\w*admin\w*)\s*(?:,[\w\s,]*)?\bto\b"
     r"|\bgrant\s+(?:[\w\s,]*\s)?any\s+\w+|\bgrant\s+(?:control\s+server|impersonate|take\s+ownership|alter\s+any\s+\w+)\b"
     r"|\bset\s+password\s+for\b|\balter\s+(?:user|role|login)\s+['\"`]?(?:postgres|root|sa|admin\w*|dba)\b[^;]{0,400}\b(?:password|identified)\b"
     r"|\balter\s+authorization\b|\breassign\s+owned\b|\balter\s+(?:database|schema)\s+\S+\s+owner\s+to\b"
     r"|\bupdate\b[^;]{0,400}\bset\b(?:(?!\bwhere\b)[^;]){0,400}=\s*['\"](?:admin|administrator|superuser|super_?admin|root|owner|sysadmin)['\"]"),
    # (a server's settings: those that lose data, blind its audit or open it are refused; the others
    # - how much it logs, its memory, a replica's one skipped event - are asked for, see controls)
    ("row level|drop policy|alter system|set global|set_config",
     r"\bdisable\s+row\s+level\s+security\b|\bno\s+force\s+row\s+level\s+security\b|\bdrop\s+policy\b"
     r"|\balter\s+system\s+set\s+(?:(?:fsync|full_page_writes|synchronous_commit|archive_command|archive_mode|wal_level"
     r"|shared_preload_libraries|ssl\w*|password_encryption|listen_addresses|hba_file|log_(?:dis)?connections|log_min_messages)\b"
     r"|(?:pgaudit\.log|log_statement)\s*(?:=|to)\s*'none'|\w*mem\w*\s*(?:=|to)\s*'\d+\s*[gt]b')"
     r"|\bset\s+global\s+(?!sql_(?:replica|slave)_skip_counter\s*=\s*1\b|max_connections\b|long_query_time\b|slow_query_log\w*"
     r"|innodb_buffer_pool_size\b|max_allowed_packet\b|wait_timeout\b|interactive_timeout\b|binlog_expire\w*)\w+"
     r"|\bset_config\(\s*'role'"),
)

# (hints, pattern) parts of the resource family (resource.py): sleeps, huge series, joins without end
SQL_ABUSE_PARTS = (
    ("sleep(|benchmark(|generate_series",
     r"\bpg_sleep\(\s*(?:\d{3,}|\d+\s*\*\s*\d+\s*\*)|\bsleep\(\s*\d{4,}|\bbenchmark\(\s*\d{7,}|\bgenerate_series\(\s*\d+(?:::\w+)?\s*,\s*\(?\s*(?:\d{9,}|10\s*\^\s*(?:9|\d{2,})|\d+e(?:9|\d{2,}))"),
    ("cross|from|recursive", r"\bcross\s+join\b[^;]*\bcross\s+join\b|\bfrom\s+\w+(?:\s+\w+)?\s*,\s*\w+(?:\s+\w+)?\s*,\s*\w+"
     # (a table with itself, every row with every other: WHERE a.id <> b.id and nothing else)
     r"|\bfrom\s+(?P<pair>[\w.]+)\s+(?:as\s+)?\w+\s*,\s*(?P=pair)\s+(?:as\s+)?\w+\s+where\s+[\w.]+\s*(?:<>|!=)\s*[\w.]+\s*(?:;|$|\))"
     r"|\bwith\s+recursive\b(?![^;]*\b(?:where|limit)\b)"
     r"|\bwith\s+recursive\b[^;]{0,2000}?\bunion\b[^;]{0,2000}?\bwhere\s+(?:true|1\s*=\s*1)\s*\)(?![^;]*\blimit\b)"
     # (a counter that grows, bounded only from below: WHERE n > 0 never ends it)
     r"|\bwith\s+recursive\b[^;]{0,2000}?\bselect\s+(?P<counter>\w+)\s*\+\s*\d+[^;]{0,2000}?\bwhere\s+(?P=counter)\s*(?:>|>=|<>|!=)\s*-?\d+\s*\)(?![^;]*\blimit\b)"
     # a big table joined with itself, every row with every row, kept whole
     r"|\bfrom\s+(?P<table>[\w.]+)(?:\s+(?:as\s+)?\w+)?\s+cross\s+join\s+(?P=table)\b(?![^;]*\b(?:limit|where)\b)"),
    ("repeat(", r"\brepeat\([^;]*?,\s*(?:\d{9,}|\d{6,}\s*\)[^;]*\bgenerate_series\(\s*\d+\s*,\s*\d{4,})"),
    # a cartesian product of big series; memory without limit; a loop of a hundred million
    ("generate_series|work_mem|loop",
     r"\bgenerate_series\([^)]*(?:\d{5,}|\de\d)[^)]*\)[^;]*\bgenerate_series\([^)]*(?:\d{5,}|\de\d)[^)]*\)"
     r"|\bset\s+(?:local\s+)?work_mem\s*(?:=|to)\s*'?(?:\d{2,}\s*gb|\d+\s*tb)"
     r"|\bfor\s+\w+\s+in\s+\d+\s*\.\.\s*\d{7,}\s+loop\b"),
)
