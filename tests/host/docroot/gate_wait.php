<?php
// Waits (up to 10 s) for gate_open.php to set the gate key.
$gate = 'gate:' . ($_GET['id'] ?? '');
$r = ephpm_kv_wait($gate, 0, 10000);
echo $r === false ? 'timeout' : 'opened by ' . $r['value'];
