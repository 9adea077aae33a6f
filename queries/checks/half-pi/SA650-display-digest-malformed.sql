-- rule: SA650
-- requires: tool_display_projections
-- what: a tool display card's args_digest is not sha256: + 64 lowercase hex
-- Spec §4.12, §6.3, §10 invariant 21 (P). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
SELECT
    'tool_display_projections' AS tbl,
    card.rowid AS row_id,
    'tool card ' || card.request_id || '#' || card.ordinal || ' (' || card.tool
        || '): args_digest is not sha256: + 64 lowercase hex; it has ' || length(card.args_digest)
        || ' characters' AS message,
    card.conversation_id AS session_id,
    json_object('request_id', card.request_id, 'ordinal', card.ordinal, 'tool', card.tool,
        'length', length(card.args_digest)) AS evidence
FROM tool_display_projections AS card
WHERE NOT (
    typeof(card.args_digest) = 'text'
    AND length(card.args_digest) = 71
    AND substr(card.args_digest, 1, 7) = 'sha256:'
    AND substr(card.args_digest, 8) NOT GLOB '*[^0-9a-f]*'
)
ORDER BY card.rowid
