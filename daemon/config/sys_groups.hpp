// Group lookups shared by the config check (daemon.admin_group) and the
// control socket (its chgrp), so both read the group database the same way.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace vf {

// The gid of group `name`, nullopt when the host has no such group.
std::optional<gid_t> group_id(const std::string& name);

}  // namespace vf
