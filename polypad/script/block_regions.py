"""What each block reads and writes: :mod:`analyses.block_regions`, by the name
docs/tvmscript.md has given it (``polypad.script.block_regions.block_regions(f)``).

The inference asks the deciders (:mod:`analyses`), a layer below the script,
so it lives there; nothing in polypad imports this module, and the layer
test lets its import through by name (tests/test_layers.py).
"""

from analyses.block_regions import BlockRegions, Undecided, block_regions

__all__ = ["BlockRegions", "Undecided", "block_regions"]
