<?php
echo 'app index: ', $_SERVER['SCRIPT_NAME'];
