%% SPDX-License-Identifier: GPL-2.0
%% Two hot functions for the end-to-end tests: alpha/1 costs about twice as
%% much per call as beta/1. Runs for SECONDS, prints one line and halts.
%%
%%   erlc -o BUILD hot.erl
%%   erl -noshell -pa BUILD -s hot main 3
%%   erl -noshell -pa BUILD -eval 'hot:main(["3"])'
%%
%% Each of alpha/1 and beta/1 loops by calling itself, so that the time
%% is spent in their own JIT code (`$hot:alpha/1`, `$hot:beta/1` in the
%% perf map) and not in a helper's: the loop counter and the value travel
%% together in one small integer, Counter bsl 24 bor Value.
-module(hot).
-export([main/0, main/1, alpha/1, beta/1]).

-define(BITS, 24).
-define(MASK, 16#FFFFFF).

alpha(S) when S > ?MASK ->
    C = S bsr ?BITS,
    X = ((S band ?MASK) * 1103515245 + 12345 + C) band ?MASK,
    alpha(((C - 1) bsl ?BITS) bor X);
alpha(S) ->
    S.

beta(S) when S > ?MASK ->
    C = S bsr ?BITS,
    X = ((S band ?MASK) * 22695477 + 1 + C) band ?MASK,
    beta(((C - 1) bsl ?BITS) bor X);
beta(S) ->
    S.

main() ->
    main([]).

%% From -s the argument is a list of atoms, from -eval whatever is given.
main([]) ->
    run(3);
main([Arg | _]) ->
    case seconds(Arg) of
        S when is_number(S), S > 0 ->
            run(S);
        _ ->
            io:format(standard_error, "usage: erl -noshell -s hot main [SECONDS]~n", []),
            halt(2)
    end;
main(Arg) ->
    main([Arg]).

seconds(A) when is_atom(A) -> seconds(atom_to_list(A));
seconds(B) when is_binary(B) -> seconds(binary_to_list(B));
seconds(N) when is_number(N) -> N;
seconds(L) when is_list(L) ->
    case string:to_float(L) of
        {F, []} -> F;
        _ ->
            case string:to_integer(L) of
                {I, []} -> I;
                _ -> bad
            end
    end;
seconds(_) -> bad.

run(Seconds) ->
    End = erlang:monotonic_time(microsecond) + round(Seconds * 1000000),
    {Calls, Acc} = loop(End, 0, 0),
    io:format("hot.erl: ~b calls each of hot:alpha/1 and hot:beta/1, acc ~b~n",
              [Calls, Acc]),
    halt(0).

loop(End, Calls, Acc) ->
    case erlang:monotonic_time(microsecond) < End of
        true -> loop(End, Calls + 100, rounds(100, Acc));
        false -> {Calls, Acc}
    end.

rounds(0, Acc) ->
    Acc;
rounds(K, Acc) ->
    A = alpha((2000 bsl ?BITS) bor ((Acc + K) band ?MASK)),
    B = beta((1000 bsl ?BITS) bor ((A - K) band ?MASK)),
    rounds(K - 1, A bxor B).
