<?php
// Whether a file exists (an upload's temporary file must be gone by now).
echo json_encode(['exists' => file_exists($_GET['path'] ?? '')]);
