-- Runs left open, or finished with an effect of unknown outcome, with their recovery conditions.
--
-- Parameters:
--   $format     VARCHAR  only sources of this format (tiny-agent, rivumi, half-pi, claude-code, codex); default: every format
--   $condition  VARCHAR  only runs with this condition among their conditions (e.g. effect-unknown)
-- Columns:
--   path             VARCHAR    the source, as it was named when loaded
--   format           VARCHAR    the source format
--   session_id       VARCHAR    the session
--   run_id           VARCHAR    the run (CONTRACT §4 run ids)
--   kind             VARCHAR    run, compaction, turn, remote-run, approval, task or request
--   state            VARCHAR    the run's state (open, or how a run with an unknown effect ended)
--   condition        VARCHAR    the first applicable recovery condition
--   conditions       VARCHAR[]  every applicable recovery condition, in the contract's order
--   seed_kind        VARCHAR    replay (continuing cannot repeat a side effect) or fork; NULL: no seed (corrupt history)
--   pending_effects  INTEGER    effects whose outcome is unknown or that are still to run
--   last_seq         BIGINT     the run's last loaded record (seq, event sequence or message seq)
--   last_at          TIMESTAMP  the time of the run's last loaded record (UTC)
SELECT
    s.path,
    s.format,
    r.session_id,
    r.run_id,
    r.kind,
    r.state,
    r.condition,
    r.conditions,
    r.seed_kind,
    r.pending_effects,
    r.last_seq,
    r.last_at
FROM runs AS r
JOIN sources AS s USING (source_id)
WHERE r.condition IS NOT NULL
    AND ($format IS NULL OR s.format = $format)
    AND ($condition IS NULL OR list_contains(r.conditions, $condition))
ORDER BY s.path, r.session_id NULLS FIRST, r.run_id;
