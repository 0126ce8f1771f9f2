"""What differs between the Python and numpy versions pyproject.toml allows (Python >= 3.10, numpy >= 1.24).

Every shim lives here, so dropping an old version is one edit: each name is the library's own where the
installed version has it, else an equivalent with the same results. numpy's names are resolved on first use
(importing the model does not import numpy).
"""

from __future__ import annotations

import sys
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    try:
        from typing import dataclass_transform
    except ImportError:  # Python 3.10: it only informs type checkers

        def dataclass_transform(**_kw):
            return lambda cls: cls


if sys.version_info >= (3, 11):
    from enum import StrEnum
else:
    from enum import Enum

    class StrEnum(str, Enum):
        """Members are their values: equal to, hashed, printed and formatted as the string."""

        def __str__(self) -> str:
            return str(self.value)

        def __format__(self, spec: str) -> str:
            return str(self.value).__format__(spec)


@cache
def _byte_bits():
    import numpy as np

    return np.array([bin(b).count("1") for b in range(256)], np.uint8)


def bitwise_count_by_bytes(a):
    """The set bits of each element of an unsigned integer array, as uint8: numpy 2's `np.bitwise_count`."""
    import numpy as np

    flat = np.asarray(a, order="C").reshape(-1)
    bits = _byte_bits()[flat.view(np.uint8)].reshape(len(flat), flat.itemsize).sum(1, dtype=np.uint8)
    return bits.reshape(np.shape(a))[()]


def __getattr__(name: str) -> Any:
    if name == "bitwise_count":
        import numpy as np

        return getattr(np, "bitwise_count", bitwise_count_by_bytes)  # numpy < 2.0 has none
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
