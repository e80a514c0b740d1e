import os
import sys
from pathlib import Path

# A conversion of a pruned module that fails is the file's failure here, not retried on the
# whole file (which a run does, and which would hide the engine error behind a right answer).
os.environ.setdefault("MIGRATE_NO_FALLBACK", "1")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
