"""How to reach a server, the way the mysql and mysqlbinlog clients are told (issue 28).

`add_login_options(parser)` declares `-h/--host`, `-P/--port`, `-u/--user`, `-p/--password`,
`-S/--socket`, `--password-env`, `--defaults-file` and `--no-defaults`; `-h` is then the host,
so the command's help is `--help` alone, as with mysqlbinlog. `login(args)` gives the
`replication.connection.Connection` keywords, taking each setting from, first to last:

1. the command line. `-pSECRET` and `--password=SECRET` give the password; `-p` or `--password`
   alone asks for it on the terminal (never echoed; an error without a terminal), and the word
   after it stays what it is (a file), as with the mysql client;
2. `--password-env VAR`: the password from that variable (nothing on the command line);
3. option files, as the MariaDB/MySQL clients read them: `/etc/my.cnf`, `/etc/mysql/my.cnf`,
   `~/.my.cnf` (later files win), groups `[client]`, `[client-server]`, `[client-mariadb]` and
   `[mysqlbinlog]` (later groups win); `--defaults-file FILE` reads that file alone,
   `--no-defaults` none. Keys: host, port, user, password, socket (`-` and `_` alike, values
   with or without quotes, `!include` lines skipped);
4. `MYSQL_PWD`, for the password, as the clients do (deprecated there, read here all the same);
5. defaults: the process's login name as the user, as the clients have it; host localhost.

`localhost` (or no host) means the local server's socket file, as the clients do: `--socket`,
else the option files' socket, else the first of the usual paths that exists; without one, TCP
to 127.0.0.1. Any other host is TCP to that host and `--port` (default 3306).
"""
from __future__ import annotations

import os
import sys

from .options import UsageError, int_in
from .parser import PROMPT, unset_variable

__all__ = ["add_login_options", "login", "PROMPT", "OPTION_FILES", "GROUPS", "SOCKETS"]

OPTION_FILES = ("/etc/my.cnf", "/etc/mysql/my.cnf", "~/.my.cnf")
GROUPS = ("client", "client-server", "client-mariadb", "mysqlbinlog")
SOCKETS = ("/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", "/tmp/mysql.sock")
KEYS = ("host", "port", "user", "password", "socket")


def add_login_options(parser, title="server (as the mysql client is told: option files, "
                                    "MYSQL_PWD)"):
    """The login options on `parser`, which must be made with add_help=False: -h is the host."""
    parser.add_argument("--help", action="help", help="show this help message and exit")
    g = parser.add_argument_group(title)
    g.add_argument("-h", "--host", help="server host (default localhost: its socket file)")
    g.add_argument("-P", "--port", type=int_in(1, 65535, "a port"),
                   help="TCP port (default 3306)")
    g.add_argument("-u", "--user", help="account (default: your login name)")
    g.add_argument("-p", "--password", metavar="PASSWORD", dest="password",
                   help="-pPASSWORD or --password=PASSWORD; -p alone asks on the terminal")
    g.add_argument("--password-env", metavar="VAR",
                   help="environment variable holding the password (never on the command line)")
    g.add_argument("-S", "--socket", help="the local server's socket file")
    g.add_argument("--defaults-file", metavar="FILE", help="read options from this file only")
    g.add_argument("--no-defaults", action="store_true", help="read no option file")
    parser.prompt_words = ("-p", "--password")  # cli/parser.Parser: a bare one asks


def _strip(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def option_file_settings(files, groups=GROUPS) -> dict:
    """{key: value} of the login keys in `files`' `groups` (later files and groups win)."""
    out = {}
    for path in files:
        path = os.path.expanduser(path)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = "".join(line for line in fh if not line.lstrip().startswith("!"))
        except OSError:
            continue
        import configparser  # the login's modules load when a command logs in, not at its start

        cp = configparser.ConfigParser(allow_no_value=True, strict=False, interpolation=None,
                                       comment_prefixes=("#", ";"), inline_comment_prefixes=None)
        try:
            cp.read_string(text, source=path)
        except configparser.Error as e:
            raise UsageError(f"option file {path}: {str(e).splitlines()[0]}") from None
        for group in groups:
            if not cp.has_section(group):
                continue
            for key, value in cp.items(group):
                key = key.replace("_", "-")
                if key in KEYS and value is not None:
                    out[key] = _strip(value)
    return out


def login(args) -> dict:
    """Connection keywords (host, port, user, password, unix_socket) from args, option files and
    the environment."""
    if args.no_defaults:
        files = ()
    elif args.defaults_file:
        if not os.path.isfile(args.defaults_file):
            raise UsageError(f"--defaults-file: {args.defaults_file}: no such file")
        files = (args.defaults_file,)
    else:
        files = OPTION_FILES
    conf = option_file_settings(files)
    host = args.host or conf.get("host") or "localhost"
    try:
        port = args.port or int(conf.get("port") or 3306)
    except ValueError:
        raise UsageError(f"the option files' port is not a number: {conf.get('port')!r}") from None
    import getpass

    user = args.user or conf.get("user") or getpass.getuser()
    password = _password(args, conf)
    sock = None
    if host == "localhost":
        sock = args.socket or conf.get("socket") or next(
            (p for p in SOCKETS if os.path.exists(p)), None)
        if sock is None:
            host = "127.0.0.1"
    return dict(host=host, port=port, user=user, password=password, unix_socket=sock)


def _password(args, conf):
    if args.password == PROMPT:
        try:  # getpass reads the terminal, not stdin, which may be a pipe
            with open("/dev/tty"):
                pass
        except OSError:
            raise UsageError("-p asks for the password on the terminal, and there is none: give "
                             "--password-env VAR, MYSQL_PWD or an option file's password") from None
        import getpass

        return getpass.getpass("Enter password: ", stream=sys.stderr)
    if args.password is not None:
        return args.password
    if args.password_env:
        problem = unset_variable(args.password_env, "--password-env")
        if problem:
            raise UsageError(problem)
        return os.environ[args.password_env]
    if "password" in conf:
        return conf["password"]
    return os.environ.get("MYSQL_PWD")
