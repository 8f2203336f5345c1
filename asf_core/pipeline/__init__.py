"""What the ``asf`` command and :mod:`asf_core.api` do with stores, in the host's order.

:mod:`~asf_core.pipeline.host` calls the plugins' hooks (typed, checked against the contract,
a misbehaving plugin blamed by name); :mod:`~asf_core.pipeline.stores` finds the stores a path
holds and picks the plugin for each; :mod:`~asf_core.pipeline.listing` lists their sessions;
:mod:`~asf_core.pipeline.conversion` converts a store (:mod:`~asf_core.pipeline.store_run`),
planned into units (:mod:`~asf_core.pipeline.planned`, :mod:`~asf_core.pipeline.units`) run
on every core (:mod:`~asf_core.pipeline.workers`) and skipped when their fingerprint
(:mod:`~asf_core.pipeline.fingerprints`) says nothing changed, and writes its report
(:mod:`~asf_core.pipeline.report`). :mod:`~asf_core.pipeline.picking` picks sessions across
stores, :mod:`~asf_core.pipeline.single` converts one picked session in memory;
:mod:`~asf_core.pipeline.inputs` keeps output off the inputs.

Nothing here knows a format; the ASF library it writes with (model, writer, canonical form,
layout) sits one level up, in :mod:`asf_core`.
"""
