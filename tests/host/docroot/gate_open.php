<?php
ephpm_kv_set('gate:' . ($_GET['id'] ?? ''), 'request 2', 60);
echo 'opened';
