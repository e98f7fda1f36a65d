"""A Spark standalone cluster on loopback for the tests: a master and two workers started from
pyspark's own launcher (bin/spark-class ...deploy.master.Master / ...deploy.worker.Worker), each
worker with its own work directory, and a Python for the executors that does NOT have
binlog_grammar: a venv (no pip) that sees only the base interpreter's site-packages as a plain
path (so their .pth files, the editable install's among them, are not run). The package reaches
the executors only through the job (binlog_grammar.spark.ship). Stopped by pid."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bare_python(folder: str) -> str:
    """A Python whose path has pyspark and its dependencies but not binlog_grammar."""
    import site

    venv = os.path.join(folder, "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    py = os.path.join(venv, "bin", "python")
    sp = subprocess.run([py, "-c", "import site; print(site.getsitepackages()[0])"],
                        capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(sp, "base_site.pth"), "w") as fh:
        fh.write("\n".join(site.getsitepackages()) + "\n")
    return py


class SparkCluster:
    """master_url, rest (the master's JSON status), workers' work dirs; stop() ends them."""

    def __init__(self, folder: str, workers: int = 2, cores: int = 1, memory: str = "1g"):
        import pyspark

        self.folder = folder
        self.home = os.path.dirname(pyspark.__file__)
        self.procs = []
        self.python = bare_python(folder)
        env = dict(os.environ, SPARK_HOME=self.home, SPARK_LOCAL_IP="127.0.0.1",
                   PYSPARK_PYTHON=self.python, SPARK_NO_DAEMONIZE="1")
        for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "PYTHONPATH"):
            env.pop(k, None)  # the workers have no credentials and no package of their own
        self.env = env
        cls = os.path.join(self.home, "bin", "spark-class")
        port, ui = _port(), _port()
        self.master_url = f"spark://127.0.0.1:{port}"
        self.ui = f"http://127.0.0.1:{ui}"
        self._start([cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                     "--port", str(port), "--webui-port", str(ui)], "master")
        self._wait(lambda: self.status() is not None, "master")
        self.work_dirs = []
        for i in range(workers):
            wd = os.path.join(folder, f"worker{i}")
            os.makedirs(wd)
            self.work_dirs.append(wd)
            self._start([cls, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                         "--cores", str(cores), "--memory", memory, "--work-dir", wd,
                         "--webui-port", str(_port()), self.master_url], f"worker{i}", cwd=wd)
        self._wait(lambda: len([w for w in (self.status() or {}).get("workers", [])
                                if w.get("state") == "ALIVE"]) == workers, "workers")

    def _start(self, cmd, name, cwd=None):
        log = open(os.path.join(self.folder, name + ".log"), "wb")
        self.procs.append(subprocess.Popen(cmd, env=self.env, stdout=log, stderr=log,
                                           cwd=cwd or self.folder, start_new_session=True))

    def _wait(self, ok, what, timeout=120):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if ok():
                return
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"spark cluster: the {what} did not come up in {timeout} s "
                           f"(logs in {self.folder})")

    def status(self):
        try:
            with urllib.request.urlopen(self.ui + "/json/", timeout=2) as r:
                return json.load(r)
        except (OSError, ValueError):
            return None

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        self.procs = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        shutil.rmtree(os.path.join(self.folder, "venv"), ignore_errors=True)
