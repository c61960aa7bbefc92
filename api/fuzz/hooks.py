# Loaded by api/src/routes/schemathesis.test-support.ts (SCHEMATHESIS_HOOKS) for every fuzzing run.
#
# A fresh Idempotency-Key on every call, as a client makes one per intent. Hypothesis replays saved and
# failing cases (and a time-bounded run repeats its suites), so a generated key came back with the same body:
# the API then rightly answered the first create again, naming a resource the earlier scenario had deleted,
# and the next step's 404 read as "created resource not found" (seed 1617031332). A key outside the
# header's pattern is left as generated, so the refusal of a malformed key is still fuzzed, and so is every
# negative case: a changed header makes Schemathesis check the case again, and a case that left out its
# Authorization header on purpose would then be sent with it.
import re
import uuid

import schemathesis

VALID_KEY = re.compile(r"^[A-Za-z0-9._:~+/=-]{1,255}$")


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if case.meta is not None and case.meta.generation.mode.is_negative:
        return
    key = (case.headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and VALID_KEY.fullmatch(key):
        case.headers["Idempotency-Key"] = str(uuid.uuid4())
