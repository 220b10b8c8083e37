"""The tuning server: ``mftune serve``, its HTTP ask/tell API, leases and dashboard.

Modules: :mod:`~mftune.service.hosted` (a served study: the engine thread and
ask/tell/heartbeat), :mod:`~mftune.service.leases`, :mod:`~mftune.service.lock`
(one server per study file), :mod:`~mftune.service.requests` (request checks),
:mod:`~mftune.service.app` (the Starlette application),
:mod:`~mftune.service.dashboard`, :mod:`~mftune.service.openapi`,
:mod:`~mftune.service.server` (start-up), :mod:`~mftune.service.worker` (the
HTTP worker) and :mod:`~mftune.service.bench`. Needs the ``serve`` extra.
"""
