"""Writing a file the user named (``viva report --out FILE``) without surprises.

- a symbolic link is refused, never followed (``--out`` must not become a way to overwrite the
  file a link points at);
- an existing file is kept unless the caller says ``force`` (``--force``);
- the text is written to a new temporary file beside the target, then moved into place in one
  step (``link`` when the target must not exist, so a file created meanwhile is not overwritten
  either; ``replace`` with ``force``, which replaces a link itself rather than its target), so a
  failed write leaves no half-written file;
- something that exists but is not a regular file (a device such as ``/dev/full``, a FIFO, a
  folder) is refused;
- every failure is one :class:`OutputError` naming the file and the reason (``No space left on
  device``, ``Permission denied``...), never blamed on the data home.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class OutputError(OSError):
    """A file viva was asked to write and did not; the message names the file and what to do."""


def write_new_file(path: str | os.PathLike[str], text: str, force: bool = False, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` (newlines as they are) and return its absolute path.

    Raises:
        OutputError: ``path`` is a symbolic link, exists and ``force`` is False, exists but is not a
            regular file, or the write failed (the message names ``path``).
    """
    target = Path(os.path.abspath(Path(path).expanduser()))
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"{target}: cannot write it ({exc.strerror or exc})") from None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise OutputError(f"{target}: a symbolic link; viva does not write through links "
                              "(give the path of a regular file)")
        if not stat.S_ISREG(st.st_mode):
            raise OutputError(f"{target}: exists and is not a regular file; give another file name")
        if not force:
            raise OutputError(f"{target}: exists; pass --force to overwrite it")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{target}: cannot create its folder ({exc.strerror or exc})") from None
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:60]}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644 & ~_umask())
        if force:
            os.replace(tmp, target)
        else:
            os.link(tmp, target)  # fails if the name appeared meanwhile
            os.unlink(tmp)
        tmp = None
    except FileExistsError:
        raise OutputError(f"{target}: exists; pass --force to overwrite it") from None
    except OSError as exc:
        raise OutputError(f"{target}: cannot write it ({exc.strerror or exc}); nothing was written") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
