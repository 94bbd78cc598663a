<?php
// Burns CPU until max_execution_time stops it.
set_time_limit(1);
$i = 0;
while (true) {
    $i++;
}
