import sys

from onnxkit.cli import main

sys.exit(main())
