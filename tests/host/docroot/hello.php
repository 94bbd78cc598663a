<?php
header('X-Hello: world');
echo 'hello';
