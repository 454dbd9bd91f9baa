---------- MODULE MCetcdraftBounded ----------
\* mcheck's bound on Specula's MCetcdraft: its Next has actions with no counter
\* (ReplicateImplicitEntry, AppendEntriesToSelf), so its state space is unbounded
\* and Specula runs it in simulation.  A log-length constraint makes it finite.
EXTENDS MCetcdraft

CONSTANT MaxLogLength

LogLengthConstraint == \A i \in Server : LastIndex(log[i]) <= MaxLogLength
=============================================
