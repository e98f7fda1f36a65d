"""A throwaway MariaDB server on loopback, for tests, samples and benchmarks.

Started as root with a temporary data directory, binary logging on, and stopped by its pid.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def available() -> bool:
    return shutil.which("mariadbd") is not None and shutil.which("mariadb-install-db") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PortTaken(RuntimeError):
    """mariadbd could not bind its TCP port: something else took it."""


class MariaDB:
    """`with MariaDB(options) as db: db.sql("...")`; binlogs land in db.datadir."""

    def __init__(self, options=(), basedir=None):
        self.options = list(options)
        self.tmp = Path(basedir or tempfile.mkdtemp(prefix="binlog-grammar-mariadb-"))
        self.datadir = self.tmp / "data"
        self.socket = self.tmp / "mysqld.sock"
        self.port = _free_port()
        self.proc = None
        self.started = False  # it ran once on self.port (a restart keeps the port)

    @property
    def tmpdir(self) -> Path:
        """The server's own temporary folder (TMPDIR of mariadb-install-db, --tmpdir of mariadbd):
        other servers and tools on the machine share /tmp, and whatever tidies it must not take
        this server's temporary tables."""
        return self.tmp / "tmp"

    def start(self, timeout=60):
        self.tmpdir.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "TMPDIR": str(self.tmpdir)}
        if not self.datadir.exists():
            r = subprocess.run(["mariadb-install-db", "--no-defaults", "--user=root",
                                f"--datadir={self.datadir}", "--auth-root-authentication-method=normal",
                                "--skip-test-db"], capture_output=True, text=True, env=env)
            if r.returncode != 0:
                raise RuntimeError(f"mariadb-install-db failed: {r.stderr[-2000:]}")
        for attempt in range(3):
            try:
                return self._launch(env, timeout)
            except PortTaken:
                # another process (a test worker beside this one) took the port between
                # _free_port and the bind: a first start may pick another; a restart keeps its own
                if self.started or attempt == 2:
                    raise
                self.port = _free_port()

    def _log_since(self, offset: int) -> str:
        try:
            with open(self.tmp / "error.log", "rb") as fh:
                fh.seek(offset)
                return fh.read().decode(errors="replace")
        except OSError:
            return ""

    def _launch(self, env, timeout):
        try:
            logged = (self.tmp / "error.log").stat().st_size  # what this launch writes follows
        except OSError:
            logged = 0
        cmd = ["mariadbd", "--no-defaults", "--user=root", f"--datadir={self.datadir}",
               f"--socket={self.socket}", f"--port={self.port}", "--bind-address=127.0.0.1",
               f"--pid-file={self.tmp / 'mysqld.pid'}", "--log-bin=mariadb-bin", "--server-id=1",
               "--binlog-format=ROW", "--skip-name-resolve", "--innodb-buffer-pool-size=64M",
               f"--log-error={self.tmp / 'error.log'}", f"--tmpdir={self.tmpdir}", *self.options]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     env=env)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                since = self._log_since(logged)
                if "Bind on TCP/IP port" in since and "Address already in use" in since:
                    raise PortTaken(f"mariadbd exited: {self.log_tail()}")
                raise RuntimeError(f"mariadbd exited: {self.log_tail()}")
            r = subprocess.run(self._client() + ["-e", "SELECT 1"], capture_output=True)
            if r.returncode == 0:
                self.started = True
                return self
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"mariadbd did not start in {timeout}s: {self.log_tail()}")

    def log_tail(self):
        try:
            return (self.tmp / "error.log").read_text()[-2000:]
        except OSError:
            return "(no error log)"

    def _client(self):
        return ["mariadb", "--no-defaults", "-uroot", f"--socket={self.socket}",
                "--default-character-set=utf8mb4"]

    def sql(self, statements: str, database=None) -> str:
        cmd = self._client() + ["--batch", "--skip-column-names"]
        if database:
            cmd.append(database)
        r = subprocess.run(cmd, input=statements, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"SQL failed: {r.stderr.strip()}")
        return r.stdout

    def binlogs(self):
        index = self.datadir / "mariadb-bin.index"
        names = [line.strip() for line in index.read_text().splitlines() if line.strip()]
        return [self.datadir / Path(n).name for n in names]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None

    def restart(self, sig=signal.SIGTERM, down=0.0, timeout=60):
        """Stop the server with `sig` (SIGTERM: a clean shutdown, SIGKILL: a crash), leave it down
        for `down` seconds, and start it again on the same data directory and the same port (a
        client that reconnects finds it where it was)."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            self.proc.wait(timeout=60)
        self.proc = None
        if down:
            time.sleep(down)
        return self.start(timeout)

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()
