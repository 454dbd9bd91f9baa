---------- MODULE MCetcdraftBounded ----------
\* mcheck's bound on Specula's MCetcdraft: its Next has actions with no counter
\* (ReplicateImplicitEntry, AppendEntriesToSelf), so its state space is unbounded
\* and Specula runs it in simulation.  A log-length constraint makes it finite.
EXTENDS MCetcdraft

CONSTANT MaxLogLength

LogLengthConstraint == \A i \in Server : LastIndex(log[i]) <= MaxLogLength

\* etcdraft.tla's NextAsync applies committed entries; MCetcdraft's Next does not, so
\* there applied keeps its initial value.  mcheck's ApplyCommitted adds the action.
MCApplyEntries ==
    /\ \E i \in Server : applied[i] < commitIndex[i] /\ etcd!ApplyEntries(i, commitIndex[i])
    /\ UNCHANGED faultVars

mc_etcdSpecApply == MCInit /\ [][MCNextDynamic \/ MCApplyEntries]_mc_vars
=============================================
