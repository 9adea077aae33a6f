-- rule: SA610
-- requires: context_summaries
-- what: a context summary node the store would refuse: empty text or model, a bad version name, or broken generation-mode, parent and generation-key rules, or a negative token count
-- Spec §4.5, §10 invariant 4 (H). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
-- Digest formats are judged by recomputing the digests (SA609); ids by SA620; the range by SA608.
WITH checked AS (
    SELECT
        c.rowid AS row_id,
        c.id,
        c.session_id,
        c.generation_mode,
        CASE WHEN c.summary = '' THEN 'the summary text is empty; ' ELSE '' END
        || CASE WHEN c.provider_id = '' THEN 'provider_id is empty; ' ELSE '' END
        || CASE WHEN c.model_id = '' THEN 'model_id is empty; ' ELSE '' END
        || CASE
            WHEN length(c.profile) NOT BETWEEN 1 AND 64 OR c.profile NOT GLOB '[a-z0-9]*'
                OR c.profile GLOB '*[^a-z0-9_.-]*'
                THEN 'profile ' || quote(substr(c.profile, 1, 80)) || ' is not a version name; '
            ELSE ''
        END
        || CASE
            WHEN length(c.policy_version) NOT BETWEEN 1 AND 64 OR c.policy_version NOT GLOB '[a-z0-9]*'
                OR c.policy_version GLOB '*[^a-z0-9_.-]*'
                THEN 'policy_version ' || quote(substr(c.policy_version, 1, 80)) || ' is not a version name; '
            ELSE ''
        END
        || CASE
            WHEN length(c.projection_version) NOT BETWEEN 1 AND 64 OR c.projection_version NOT GLOB '[a-z0-9]*'
                OR c.projection_version GLOB '*[^a-z0-9_.-]*'
                THEN 'projection_version ' || quote(substr(c.projection_version, 1, 80))
                || ' is not a version name; '
            ELSE ''
        END
        || CASE
            WHEN c.generation_mode NOT IN ('full', 'incremental', 'rebase')
                THEN 'generation_mode ' || quote(substr(c.generation_mode, 1, 80))
                || ' is not full, incremental or rebase; '
            ELSE ''
        END
        || CASE
            WHEN c.generation_key <> '' AND c.generation_mode IN ('full', 'incremental')
                THEN 'a ' || c.generation_mode || ' summary has a generation_key (only a rebase may); '
            WHEN c.generation_mode = 'rebase' AND c.generation_key <> '' AND (
                length(c.generation_key) <> 71 OR substr(c.generation_key, 1, 7) <> 'sha256:'
                OR substr(c.generation_key, 8) GLOB '*[^0-9a-f]*'
            )
                THEN 'generation_key is not sha256: and 64 lowercase hex; '
            ELSE ''
        END
        || CASE
            WHEN c.generation_mode = 'incremental' AND c.parent_summary_id = ''
                THEN 'an incremental summary has no parent_summary_id; '
            WHEN c.generation_mode <> 'incremental' AND c.parent_summary_id <> ''
                THEN 'a ' || c.generation_mode || ' summary has a parent_summary_id (only incremental may); '
            ELSE ''
        END
        || CASE
            WHEN c.source_estimated_tokens < 0 OR c.summary_estimated_tokens < 0 OR c.input_tokens < 0
                OR c.output_tokens < 0
                THEN 'a token count is negative; '
            ELSE ''
        END AS problems
    FROM context_summaries AS c
)
SELECT
    'context_summaries' AS tbl,
    row_id,
    session_id,
    'context summary ' || id || ' of session ' || session_id || ': ' || rtrim(problems, '; ') AS message,
    json_object('summary_id', id, 'generation_mode', generation_mode) AS evidence
FROM checked
WHERE problems <> ''
ORDER BY row_id
