"""Every function's Lambda entry point (the template's `Handler`): it imports the function's own handler,
`app.handler` from the function's code directory, with Python's garbage collector paused, and then freezes
what that import built.

A cold start creates some 80,000 objects that live as long as the container: boto3's, pydantic's,
Powertools' and Stepwise's modules, classes and models. While they are being created, the collector keeps
traversing the ones made so far, which finds almost nothing to free (about 600 objects of a CallModel
import are garbage): time for nothing (docs/measurements.md, "Fifth round").
`gc.freeze()` then moves them out of the collector's generations, so that no later collection, on the first
call or any other, traverses them; the few garbage objects among them stay for the container's life.

Locally (`make chat`, the tests) the emulation loads each function's `app.handler` itself: this module is
only what Lambda imports.
"""

import gc
from collections.abc import Callable
from importlib import import_module
from typing import Any

APP_MODULE = "app"  # the function's module in its code directory (first on Lambda's sys.path)

gc.disable()
try:
    handler: Callable[[dict[str, Any], Any], Any] = import_module(APP_MODULE).handler
finally:
    gc.freeze()
    gc.enable()
