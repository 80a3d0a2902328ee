import sys
from pathlib import Path

# test doubles (the scripted server) live beside the tests, importable from every test folder
sys.path.insert(0, str(Path(__file__).parent))
