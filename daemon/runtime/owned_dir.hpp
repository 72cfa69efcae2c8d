// What fabricd may delete: only what it made, and never through a link.
//
// Every directory fabricd removes carries a marker file it wrote when it
// created the directory; a directory without one was there before (or is
// someone else's) and is left in place with an error that says so. Removal
// opens each level with O_NOFOLLOW relative to its parent, so a symbolic
// link planted anywhere inside is unlinked, never followed, and it does not
// descend into other file systems mounted below.
//
// OwnedDir is such a directory for the life of a fabricd (<runtime_dir>/hca,
// where the device sockets live). Its marker is also its lock, in the
// spirit of the runtime tree's: the owner holds an flock on it, so a marked
// directory whose lock is free is the leftover of a dead fabricd and is
// cleared, and a locked one belongs to a live fabricd and is an error.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace vf::runtime {

// Removes `p` and all below it, links unfollowed (see above). False when
// something could not be removed (what could, is). A missing `p` is fine.
bool remove_tree(const std::filesystem::path& p) noexcept;

// Removes directory `p` only when it holds the file `marker` (fabricd made
// it) or is empty. False when it is there and is someone else's.
bool remove_if_marked(const std::filesystem::path& p, std::string_view marker) noexcept;

// The start-up error for a foreign `p`: what, where, and what to do.
std::string foreign_dir_message(const std::filesystem::path& p, std::string_view marker);

class OwnedDir {
 public:
  static constexpr std::string_view kMarker = ".vfabric-owner";
  // Creates `p` (mode 0755; the parent must exist), clearing a dead
  // fabricd's leftover first. Throws RuntimeTreeError for anything else
  // already at `p`, leaving it untouched.
  explicit OwnedDir(std::filesystem::path p);
  ~OwnedDir();  // remove()
  OwnedDir(const OwnedDir&) = delete;
  OwnedDir& operator=(const OwnedDir&) = delete;

  // Removes the directory with all in it, if it is still the one made here.
  // Idempotent.
  void remove() noexcept;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int lock_fd_ = -1;  // the marker, flocked
};

}  // namespace vf::runtime
