<?php
// This node's view of the cluster, as ephpm_kv_info() reports it.
header('Content-Type: application/json');
echo json_encode(ephpm_kv_info()['cluster']);
