"""The contract fuzzer of `bench.contract_fuzz`, a smaller run on every `make test`.

Random client sequences on raw stubs against the production server (scripted
model): invalid starts, invalid UTF-8 in every string field, results at the
tool-timeout boundary, duplicates, unknown ids, cancels, drops. None may end
in UNKNOWN, INTERNAL, a hang, or a refused late result; afterwards the server
still completes a normal run and holds no stream. `make bench` runs 15,000.
"""

from __future__ import annotations

from bench.contract_fuzz import BAD_OUTCOMES, SCRIPT, fuzz, normal_run
from forge_core.backends.scripted import ScriptedBackend, Turn
from forge_server.app import ServerOptions
from tests.helpers import address, running_server, settled


async def test_600_random_sequences_end_only_in_outcomes_the_contract_allows() -> None:
    backend = ScriptedBackend(scripts={"*": [Turn.from_json(t) for t in SCRIPT]})
    options = ServerOptions(host="127.0.0.1", port=0, start_timeout_s=2.0)
    async with running_server(backend, options) as server:
        tally = await fuzz(address(server), sequences=600, seed=22, concurrency=16)
        assert await normal_run(address(server)) == "completed"
        service = server.service
        await settled(lambda: (service.open_streams, service.active_runs) == (0, 0))
    bad = {name: tally.count(name) for name in BAD_OUTCOMES}
    assert bad == dict.fromkeys(BAD_OUTCOMES, 0), [(s.index, s.trace) for s in tally.bad]
    # The sequences reached the paths they are for, not only start errors.
    assert tally.count("completed") > 30
    assert tally.count("INVALID_ARGUMENT INVALID_WORKFLOW") > 50
    assert tally.count("INVALID_ARGUMENT UNKNOWN_CALL_ID") > 10
