<?php
// ephpm_kv_info() as JSON: the bench reads the session handler's counters
// (process-wide) before and after a run.
header('Content-Type: application/json');
echo json_encode(ephpm_kv_info());
