"""Whether a process still exists, for code that keeps per-process state in shared files.

The metrics exporter forgets the gauges of workers that are gone
(``docbase/adapters/prometheus/exposition.py``) and the workers of ``docbase serve``
skip the connection counts of dead workers (``docbase/http/connection_shares.py``).
"""

from __future__ import annotations

import os


def process_exists(pid: int) -> bool:
    """Whether process ``pid`` exists (a zombie not yet reaped still does)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, another user's: not ours, but not dead
        return True
    return True
