# Independent reference for test/experiments.test.ts: mulberry32 with exact integers, and the paired
# bootstrap of the test data set with numpy (python3 test/helpers/experiments-reference.py).
import numpy as np
M=2**32
def mulberry32(seed):
    s = seed % M
    while True:
        s = (s + 0x6D2B79F5) % M
        t = s
        t = ((t ^ (t >> 15)) * (t | 1)) % M
        t = (t ^ ((t + ((t ^ (t >> 7)) * (t | 61)) % M) % M)) % M
        yield ((t ^ (t >> 14)) % M) / 4294967296
g = mulberry32(1); print('mulberry32(1) first 3:', [next(g) for _ in range(3)])
# test data: a_i = (i*7 % 11)/10, b_i = (i*5 % 13)/12, i = 0..39
n=40
a=np.array([(i*7%11)/10 for i in range(n)]); b=np.array([(i*5%13)/12 for i in range(n)])
d=b-a
print('mean_a',a.mean(),'mean_b',b.mean(),'delta',d.mean(),'wins_a',(d< -1e-9).sum(),'wins_b',(d>1e-9).sum(),'ties',(abs(d)<=1e-9).sum())
g = mulberry32(1); R=2000
means=[]
for r in range(R):
    idx=[int(next(g)*n) for _ in range(n)]
    means.append(d[idx].mean())
print('ci', np.quantile(means, 0.025), np.quantile(means, 0.975))
