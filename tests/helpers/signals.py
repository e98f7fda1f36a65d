"""What the tests that send a Ctrl-C share (tests/output/test_flashback_spill.py,
tests/replication/test_replication_restarts.py)."""
import signal


def interruptible():
    """A child's preexec_fn: SIGINT's default action back. A shell starts background jobs with
    SIGINT ignored (CI runs the suite that way), a child inherits that, and Python leaves an
    ignored SIGINT ignored, as a program should: the command would never see the Ctrl-C a test
    sends, and would end by the closed pipe instead, with status 0."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
