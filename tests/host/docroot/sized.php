<?php
// Sets its own Content-Length (as download scripts do).
header('Content-Length: 11');
echo 'hello world';
