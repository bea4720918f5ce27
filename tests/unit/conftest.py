"""Make ``ansible_collections.ascendfleet.llm`` importable from this checkout.

.collections/ansible_collections/ascendfleet/llm is a link to the repository root, so the
collection's module_utils and modules import under their real names, as they do on a host.
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
COLLECTIONS = ROOT / ".collections"
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))
