// "host:port" text, as the host program's flags and the cluster's member
// addresses carry it.

#ifndef EPHPM_HOST_PORT_H_
#define EPHPM_HOST_PORT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace ephpm {

// Splits "host:port" (an IPv6 host in brackets: "[::1]:6380") at the last
// colon.  False when there is no host, or the port is not 0..65535.
bool SplitHostPort(std::string_view s, std::string* host, uint16_t* port);

}  // namespace ephpm

#endif  // EPHPM_HOST_PORT_H_
