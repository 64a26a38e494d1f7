// 02 — actors: a stateful object that lives on one rank. Calls from one caller run in the order
// they were made; a named actor can be found from anywhere; kill ends it.
//   mpirun -n 4 ./02_actors      (or just ./02_actors)
#include <weft/weft.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

class Account {
 public:
  explicit Account(int opening) : balance_(opening) {}
  int deposit(int amount) { return balance_ += amount; }
  int balance() const { return balance_; }
  int where() const { return weft::rank(); }

 private:
  int balance_;
};
WEFT_ACTOR(Account, int);  // the class and its constructor's argument types
WEFT_REMOTE(&Account::deposit);
WEFT_REMOTE(&Account::balance);
WEFT_REMOTE(&Account::where);

// A task that finds the actor by name, on whatever rank it runs.
int pay_in(int amount) {
  auto acct = weft::get_actor<Account>("savings");
  if (!acct) throw std::runtime_error("no actor named savings");
  return weft::get(acct->task(&Account::deposit).remote(amount));
}
WEFT_REMOTE(pay_in);

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    weft::ActorHandle<Account> acct = weft::actor<Account>(100).options({.name = "savings"}).remote();
    std::printf("actor 'savings' lives on rank %d\n", acct.task(&Account::where).remote().get());

    // Ordering: ten deposits made from here run one after the other, in this order.
    std::vector<weft::ObjectRef<int>> after;
    for (int i = 1; i <= 10; ++i) after.push_back(acct.task(&Account::deposit).remote(i));
    std::printf("balance after each deposit:");
    for (int b : weft::get(after)) std::printf(" %d", b);
    std::printf("\n");

    // Named lookup from tasks on other ranks.
    std::vector<weft::ObjectRef<int>> paid;
    for (int i = 0; i < 4; ++i) paid.push_back(weft::task(pay_in).remote(1000));
    weft::get(paid);
    int total = acct.task(&Account::balance).remote().get();
    std::printf("after 4 remote pay-ins of 1000: balance = %d\n", total);
    if (total != 100 + 55 + 4000) return 1;

    // Kill: later calls fail with ActorDiedError.
    weft::kill(acct);
    try {
      acct.task(&Account::balance).remote().get(std::chrono::seconds(10));
      std::printf("unexpected: the killed actor answered\n");
      return 1;
    } catch (const weft::ActorDiedError& e) {
      std::printf("after kill: ActorDiedError (%s)\n", e.what());
    }
    return 0;
  });
}
