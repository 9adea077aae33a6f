-- rule: SA643
-- requires: approval_audits
-- what: an approval's decision, actor, source, resolution reason or resolved_at do not fit its status
-- Spec §4.11, §7.3, §10 invariant 13 (H). Parameters: none. Output: tbl, row_id, message, session_id, evidence.
-- pending: no decision, actor, source, reason, resolved_at 0. resolved: one of the four decisions, actor_id
-- and source set, resolved_at set. expired / cancelled: no decision, actor, source or reason, resolved_at set.
SELECT
    'approval_audits' AS tbl,
    approval.rowid AS row_id,
    'approval ' || approval.approval_id || ' (' || quote(approval.status) || '): ' || CASE
        WHEN approval.status NOT IN ('pending', 'resolved', 'expired', 'cancelled')
            THEN 'status is not pending, resolved, expired or cancelled'
        WHEN approval.status = 'resolved'
            AND approval.decision NOT IN ('allow_once', 'deny_once', 'allow_session', 'deny_session')
            THEN 'decision ' || quote(approval.decision) || ' is not one of the four decisions'
        WHEN approval.status = 'resolved' AND (approval.actor_id = '' OR approval.source = '')
            THEN 'a resolved approval needs actor_id and source'
        WHEN approval.status = 'resolved' AND approval.resolved_at <= 0
            THEN 'resolved_at is not set'
        WHEN approval.status <> 'resolved'
            AND (approval.decision <> '' OR approval.actor_id <> '' OR approval.actor_label <> ''
                OR approval.source <> '' OR approval.resolution_reason <> '')
            THEN 'a ' || approval.status || ' approval carries a decision, actor, source or resolution reason'
        WHEN approval.status = 'pending' AND approval.resolved_at <> 0
            THEN 'a pending approval has resolved_at ' || quote(approval.resolved_at)
        ELSE 'resolved_at is not set'
    END AS message,
    approval.conversation_id AS session_id,
    json_object('approval_id', approval.approval_id, 'status', approval.status, 'decision', approval.decision,
        'has_actor_id', approval.actor_id <> '', 'has_actor_label', approval.actor_label <> '',
        'source', approval.source, 'has_resolution_reason', approval.resolution_reason <> '',
        'resolved_at', approval.resolved_at) AS evidence
FROM approval_audits AS approval
WHERE approval.status NOT IN ('pending', 'resolved', 'expired', 'cancelled')
    OR (
        approval.status = 'resolved'
        AND (
            approval.decision NOT IN ('allow_once', 'deny_once', 'allow_session', 'deny_session')
            OR approval.actor_id = ''
            OR approval.source = ''
            OR approval.resolved_at <= 0
        )
    )
    OR (
        approval.status <> 'resolved'
        AND (approval.decision <> '' OR approval.actor_id <> '' OR approval.actor_label <> ''
            OR approval.source <> '' OR approval.resolution_reason <> '')
    )
    OR (approval.status = 'pending' AND approval.resolved_at <> 0)
    OR (approval.status IN ('expired', 'cancelled') AND approval.resolved_at <= 0)
ORDER BY approval.rowid
