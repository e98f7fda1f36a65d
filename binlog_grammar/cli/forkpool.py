"""The process pool of `--jobs N` where the system can fork: N workers forked from the command's
process, each given one task at a time through a pipe of its own and answering through another.

What it saves over concurrent.futures.ProcessPoolExecutor (which cli.parallel uses where there is
no fork): importing multiprocessing and concurrent.futures, the pool's two threads and its
queues, about 40 ms before the first split starts and a few hundred microseconds per split on
2 busy cores; the command's whole run with the compiled backend is about half a second.

A task is (function, arguments), pickled, the function by name; its answer is its value or the
exception it raised, pickled (one that does not pickle comes back as a RuntimeError naming it).
The parent keeps the tasks no worker has yet and gives each to the first worker that is free, so
a worker slowed by other work on the machine holds up one split, not a queue of them. A task
cancelled before it starts never runs; one cancelled while it runs is let finish and its answer
dropped. Closing the pool closes the pipes (an idle worker sees their end and exits), stops the
workers still on a task nobody waits for, and reaps them all.

A worker starts as a copy of this process: the caller flushes its standard streams before
(cli.parallel.Executor), and a worker leaves by os._exit, so nothing this process buffered or
registered to run at exit runs twice.
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import struct
from collections import deque

_LEN = struct.Struct("<Q")


class Future:
    """A task's answer to come: result() waits for it (running the pool meanwhile)."""

    __slots__ = ("pool", "id", "task", "done", "value", "error", "cancelled")

    def __init__(self, pool, tid, task):
        self.pool, self.id, self.task = pool, tid, task
        self.done = self.cancelled = False
        self.value = self.error = None

    def result(self):
        while not self.done:
            if self.cancelled:
                raise RuntimeError("the task was cancelled")
            self.pool.wait()
        if self.error is not None:
            raise self.error
        return self.value

    def cancel(self) -> bool:
        if self.done:
            return False
        self.cancelled = True
        return True


class _Worker:
    __slots__ = ("pid", "tasks", "answers", "busy")

    def __init__(self, pid, tasks, answers):
        self.pid, self.tasks, self.answers, self.busy = pid, tasks, answers, None


class ForkPool:
    def __init__(self, jobs, initializer=None, initargs=()):
        self.workers, self.queue, self.next_id = [], deque(), 0
        for _ in range(jobs):
            task_r, task_w = os.pipe()
            answer_r, answer_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker
                code = 0
                try:
                    os.close(task_w)
                    os.close(answer_r)
                    for w in self.workers:  # the pipes of the workers forked before it
                        os.close(w.tasks)
                        os.close(w.answers)
                    _serve(task_r, answer_w, initializer, initargs)
                except BaseException:  # noqa: BLE001 - a worker only ever leaves by _exit
                    code = 1
                finally:
                    os._exit(code)
            os.close(task_r)
            os.close(answer_w)
            self.workers.append(_Worker(pid, task_w, answer_r))

    def submit(self, fn, *args):
        fut = Future(self, self.next_id, (fn, args))
        self.next_id += 1
        self.queue.append(fut)
        self._dispatch()
        return fut

    def _dispatch(self):
        for w in self.workers:
            if w.busy is not None:
                continue
            while self.queue and self.queue[0].cancelled:
                self.queue.popleft()
            if not self.queue:
                return
            fut = self.queue.popleft()
            data = pickle.dumps((fut.id, *fut.task), pickle.HIGHEST_PROTOCOL)
            fut.task = None
            _write_all(w.tasks, _LEN.pack(len(data)) + data)
            w.busy = fut

    def wait(self):
        """Wait for a worker's answer, take it, give that worker the next task."""
        busy = {w.answers: w for w in self.workers if w.busy is not None}
        if not busy:
            self._dispatch()
            if not any(w.busy is not None for w in self.workers):
                raise RuntimeError("no worker is running a task")
            return
        ready, _, _ = select.select(list(busy), [], [])
        for fd in ready:
            w = busy[fd]
            fut, w.busy = w.busy, None
            try:
                head = _read_exact(fd, _LEN.size)
                tid, ok, value = pickle.loads(_read_exact(fd, _LEN.unpack(head)[0]))
            except (EOFError, OSError, pickle.UnpicklingError) as e:
                fut.done, fut.error = True, RuntimeError(f"a worker process stopped ({e})")
                raise fut.error from e
            if tid == fut.id and not fut.cancelled:
                fut.done = True
                if ok:
                    fut.value = value
                else:
                    fut.error = value
        self._dispatch()

    def close(self):
        for w in self.workers:
            for fd in (w.tasks, w.answers):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if w.busy is not None:  # on a task nobody waits for any more
                try:
                    os.kill(w.pid, signal.SIGKILL)
                except OSError:
                    pass
        for w in self.workers:
            try:
                os.waitpid(w.pid, 0)
            except ChildProcessError:
                pass
        self.workers = []


def _serve(tasks, answers, initializer, initargs):
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            head = _read_exact(tasks, _LEN.size)
        except EOFError:
            return
        tid, fn, args = pickle.loads(_read_exact(tasks, _LEN.unpack(head)[0]))
        try:
            answer = (tid, True, fn(*args))
        except Exception as e:  # noqa: BLE001 - the caller's to raise
            answer = (tid, False, e)
        try:
            data = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # noqa: BLE001 - an answer or exception that does not pickle
            data = pickle.dumps((tid, False, RuntimeError(f"the task's answer: {e!r}")))
        _write_all(answers, _LEN.pack(len(data)) + data)


def _read_exact(fd, n) -> bytes:
    parts, left = [], n
    while left:
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            raise EOFError("the pipe was closed")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _write_all(fd, data):
    view, n = memoryview(data), 0
    while n < len(data):
        n += os.write(fd, view[n:])
