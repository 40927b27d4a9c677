"""Type stubs of the native module (see rigml/__init__.py for the documented API)."""

import os
from typing import Callable, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

class Character:
    """A character: mesh, skeleton, skin weights and clips."""

    @property
    def name(self) -> str: ...
    @property
    def vertices(self) -> npt.NDArray[np.float32]: ...
    @property
    def triangles(self) -> npt.NDArray[np.int64]: ...
    @property
    def joint_names(self) -> list[str]: ...
    @property
    def parents(self) -> npt.NDArray[np.int64]: ...
    @property
    def joint_positions(self) -> npt.NDArray[np.float32]: ...
    @property
    def weights(self) -> Optional[tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]]: ...
    @property
    def clip_names(self) -> list[str]: ...

class Cancel:
    """A flag that stops a solve in progress when another thread calls cancel()."""

    def __init__(self) -> None: ...
    def cancel(self) -> None: ...
    @property
    def cancelled(self) -> bool: ...

class SkinResult:
    """Weights from skin_weights: (N, K) joints (-1 unused) and weights, and what happened."""

    joints: npt.NDArray[np.int32]
    weights: npt.NDArray[np.float32]
    solved_joints: list[bool]
    unweighted: int
    over_cap: int
    seconds: float
    method: str

def load(path: Union[str, os.PathLike[str]]) -> Character: ...
def save(character: Character, path: Union[str, os.PathLike[str]], force: bool = False) -> None: ...
def skin_weights(
    vertices: npt.ArrayLike,
    triangles: npt.ArrayLike,
    joint_names: Sequence[str],
    parents: Sequence[int],
    joint_positions: npt.ArrayLike,
    *,
    method: str = "learned",
    max_influences: int = 4,
    deform: Optional[Sequence[bool]] = None,
    tails: Optional[npt.ArrayLike] = None,
    locked: Optional[Sequence[bool]] = None,
    existing: Optional[tuple[npt.ArrayLike, npt.ArrayLike]] = None,
    locked_vertices: Optional[Sequence[bool]] = None,
    model: Optional[Union[str, os.PathLike[str]]] = None,
    resolution: Optional[int] = None,
    progress: Optional[Callable[[str, float], Optional[bool]]] = None,
    cancel: Optional[Cancel] = None,
) -> SkinResult: ...
def rig(
    vertices: npt.ArrayLike,
    triangles: npt.ArrayLike,
    *,
    template: str = "detect",
    method: str = "learned",
    max_influences: int = 4,
    name: str = "rigged",
) -> tuple[Character, str]: ...
def character(
    vertices: npt.ArrayLike,
    triangles: npt.ArrayLike,
    joint_names: Optional[Sequence[str]] = None,
    parents: Optional[Sequence[int]] = None,
    joint_positions: Optional[npt.ArrayLike] = None,
    weights: Optional[tuple[npt.ArrayLike, npt.ArrayLike]] = None,
    *,
    name: str = "character",
) -> Character: ...
def evaluate(
    path: Union[str, os.PathLike[str]],
    methods: Sequence[str],
    *,
    asset_id: Optional[str] = None,
    deformation: bool = True,
    model: Optional[Union[str, os.PathLike[str]]] = None,
    rig_skin: str = "learned",
    weights: Optional[tuple[npt.ArrayLike, npt.ArrayLike]] = None,
    max_influences: int = 4,
) -> list[dict[str, object]]: ...
def names() -> dict[str, list[str]]: ...
