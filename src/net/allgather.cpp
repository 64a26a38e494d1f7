#include "net/allgather.hpp"

namespace weft::net {

std::vector<std::string> allgather_bytes(MPI_Comm comm, std::string_view mine) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(size), offs(size);
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int i = 0; i < size; ++i) {
    offs[i] = total;
    total += lens[i];
  }
  std::string all(total, '\0');
  MPI_Allgatherv(mine.data(), len, MPI_BYTE, all.data(), lens.data(), offs.data(), MPI_BYTE, comm);
  std::vector<std::string> out(size);
  for (int i = 0; i < size; ++i) out[i] = all.substr(offs[i], lens[i]);
  return out;
}

}  // namespace weft::net
