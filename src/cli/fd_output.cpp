#include "planner/cli/fd_output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace planner {

void FdOutput::mark_closed() noexcept { error_ = EBADF; }

bool FdOutput::write_all(const char* data, std::size_t n) {
  if (error_ != 0) return false;
  while (n > 0) {
    const ssize_t written = ::write(fd_, data, n);
    if (written < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      return false;
    }
    if (written == 0) {
      error_ = EIO;
      return false;
    }
    data += written;
    n -= static_cast<std::size_t>(written);
  }
  return true;
}

bool FdOutput::drain() {
  const auto n = static_cast<std::size_t>(pptr() - pbase());
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return write_all(buffer_.data(), n);
}

FdOutput::int_type FdOutput::overflow(int_type ch) {
  if (!drain()) return traits_type::eof();
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  *pptr() = traits_type::to_char_type(ch);
  pbump(1);
  return ch;
}

std::streamsize FdOutput::xsputn(const char* data, std::streamsize n) {
  const auto size = static_cast<std::size_t>(n);
  if (size <= static_cast<std::size_t>(epptr() - pptr())) {
    std::memcpy(pptr(), data, size);
    pbump(static_cast<int>(n));
    return n;
  }
  if (!drain() || !write_all(data, size)) return 0;
  return n;
}

std::string write_failure(const std::ostream& out) {
  if (const auto* fd = dynamic_cast<const FdOutput*>(out.rdbuf()); fd && fd->error() != 0) {
    return std::generic_category().message(fd->error());
  }
  return "the output stream failed";
}

}  // namespace planner
