<?php
// "PID/task/TID" of the thread running PHP (Linux).
echo readlink('/proc/thread-self');
