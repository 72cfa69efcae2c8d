// Everything a port needs to put engine packets on a link and take them off:
// IB and RoCEv2 framing, the peeks switches forward on, and wire sizes.
#pragma once

#include "dataplane/wire/frame_peek.hpp"
#include "dataplane/wire/ib_framing.hpp"
#include "dataplane/wire/roce_framing.hpp"
#include "dataplane/wire/rx_error.hpp"
#include "dataplane/wire/wire_bytes.hpp"
